// Field builders the config blocks share. Pure.
import { z } from 'zod';

/** A positive integer. */
export const positiveInt = () => z.number().int().positive();

/** A non-empty list of non-empty names, for a rule's match fields; empty says to leave `what` out to match any. */
export const names = (what: string) => z.array(z.string().min(1)).min(1, `must not be empty (leave "${what}" out to match any)`);

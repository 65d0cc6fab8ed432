// Public API: the proxy factory, configuration loading, the URI codec and error codes.
export { createProxy, type Proxy, type ProxyOptions } from './proxy.js';
export {
  loadConfig,
  parseConfig,
  validateConfig,
  ConfigSchema,
  type FederateConfig,
  type FederateConfigInput,
  type ServerConfig,
  type StdioServerConfig,
  type RemoteServerConfig,
  type LoadedConfig,
  type ParsedConfig,
} from './config/load.js';
export { createLogger, type LoggerOptions } from './logger.js';
export { encodeUri, decodeUri, createUriCodec, type UriCodec, isServerId, deriveServerId, SERVER_ID_PATTERN, type NamespacedUri } from './federation/uri.js';
export { ErrorCodes, ProxyError, type ErrorCode } from './errors.js';
export { defaultTransportFactory, type TransportFactory, type TransportCandidate } from './upstream/transports.js';
export { META_INCOMPLETE } from './protocol.js';
export { VERSION } from './version.js';

// The public face of core's visitor-tracking domain: what other packages import as @visitor-id/core/visitor-tracking.
export {
  getPixelConfig,
  type PixelConfigUpdate,
  parseIcpSettings,
  updatePixelConfig,
} from './pixel-config.js'
export {
  createVisitorProfileReader,
  type VisitorProfileReader,
  type VisitorProfileReaderOptions,
} from './profile-reader.js'
export {
  blankContactFields,
  type PixelConfigRow,
  type VisitorContactFields,
  type VisitorRow,
} from './rows.js'
export {
  getVisitorProfile,
  type PageViewEntry,
  type VisitorProfile,
  type VisitorProfileOptions,
  type VisitorSession,
} from './visitors.js'

export { principalOf } from './auth.js'
export { renderDocsPage } from './docs-page.js'
export { type ApiDocsPluginOptions, apiDocsPlugin } from './docs-plugin.js'
export {
  buildOpenApiDocument,
  type ErrorCodeDoc,
  type OpenApiDocument,
  type OpenApiOperation,
  type OpenApiOptions,
  routeErrorCodes,
  unroutedErrorCodes,
} from './openapi.js'
export { type ApiPluginOptions, apiPlugin } from './plugin.js'
export {
  type ApiServices,
  type AuthKind,
  defineRoute,
  type ExampleIds,
  type HandlerContext,
  type HttpMethod,
  type Route,
  type RouteDefinition,
  type RouteExample,
  type Tenancy,
  toFastifyPath,
} from './route-definition.js'
export { routes } from './routes/index.js'
export { parse, parseRequest } from './validation.js'

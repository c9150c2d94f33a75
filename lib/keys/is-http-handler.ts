import { NEST_METHOD_METADATA, NEST_PATH_METADATA } from '../lock.constants.js';

/** Whether Nest routes HTTP requests to `method`: it carries both a route path and a request method. */
export function isHttpHandler(method: object): boolean {
  return (
    Reflect.getOwnMetadata(NEST_PATH_METADATA, method) !== undefined &&
    Reflect.getOwnMetadata(NEST_METHOD_METADATA, method) !== undefined
  );
}

export {
  defineService,
  type DeployHints,
  type Env,
  type ServiceContext,
  type ServiceDeclaration,
  type ServiceHandle,
} from './declare';
export { envVar, fromEnv, readConfig, ServiceConfigError } from './config';
export { runMain } from './run-main';
export {
  runInProcess,
  type InProcessOptions,
  type InProcessSystem,
  type RunningInstance,
} from './run-in-process';
export { LOADER, SERVICES_DIR, System, loadSystem } from './system';
export { startOrder } from './order';

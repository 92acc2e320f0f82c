// The in-process fake Kubernetes API server and simulated kubelet (re-exports only).
export { startApiServer, type ApiServer, type ApiServerOptions } from './server.ts';
export { ObjectStore, timestamp, type KubeObject, type ObjectKey, type StoreEvent } from './store.ts';
export { Rest, PATCH_TYPES, type DeleteOptions, type ListQuery, type Subresource } from './rest.ts';
export { Faults, type Fault, type FaultSpec } from './faults.ts';
export { RequestLog, type RequestRecord } from './request-log.ts';
export { WriteHistory, type RejectedWrite, type WriteCause, type WriteRecord } from './history.ts';
export { BUILTIN_RESOURCES, ResourceRegistry, apiVersionOf, type ResourceDef } from './resources.ts';
export { ApiError, type StatusBody, type StatusCause } from './status.ts';
export { seededIds, type Ids } from './names.ts';
export { SimKubelet, stateOf, type ContainerFate, type ContainerSpec, type ContainerStatus, type KubeletPolicy } from './kubelet.ts';
export { Rbac, serviceAccountUser, type Attributes, type Authorization, type User } from './rbac.ts';

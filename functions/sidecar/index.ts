export { sidecarController, podKey, route as routeSidecarEvent, VIRTUAL_KUBELET_LABEL } from './controller.ts';
export { plan as planSidecar, type SidecarObserved, type NodeView, type CrrView } from './planner.ts';
export { podDue, dueFromSnapshot, trimPodForSidecar, type DueResult, type Due, type NotDue } from './predicate.ts';
export { SidecarOptions, DEFAULT_SIDECAR_OPTIONS, SIDECAR_STRATEGIES, sidecarOptionsFromConfig, type SidecarStrategy } from './config.ts';
export { STRATEGY_ANNOTATION } from './strategy.ts';
export { TERMINATE_SIDECAR_ENV, TERMINATE_WITH_IMAGE_ENV, IGNORE_EXIT_CODE_ENV, containerRoles, sidecarInfo } from './env.ts';
export { crrName, signalContainerName, CRR, SIDECAR_TERMINATED_CONDITION, SIGNAL_TARGET_ENV } from './actions.ts';

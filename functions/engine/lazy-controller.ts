import type { Controller } from './controller.ts';

/**
 * A controller whose observe and plan, and all they import, load on its first key: `route`
 * (a small module) decides on every event whether it concerns the controller at all, and
 * `load` (a dynamic import, a chunk of its own in the Lambda bundle) is paid only when it does.
 * The engine observes a key before it plans it, so plan always finds the controller loaded.
 */
export function lazyController<O>(name: string, route: Controller<O>['route'], load: () => Promise<Controller<O>>): Controller<O> {
  let loaded: Controller<O> | undefined;
  let loading: Promise<Controller<O>> | undefined;
  const controller = async (): Promise<Controller<O>> => {
    // A failed load (a chunk that could not be read) is tried again on the next key.
    loading ??= load().catch((err: unknown) => {
      loading = undefined;
      throw err;
    });
    return (loaded ??= await loading);
  };
  return {
    name,
    route,
    observe: async (key, kube, lock) => (await controller()).observe(key, kube, lock),
    plan: (observed, now) => {
      if (!loaded) throw new Error(`the ${name} controller planned a key it has not observed`);
      return loaded.plan(observed, now);
    },
  };
}

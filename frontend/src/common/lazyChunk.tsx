/**
 * Components whose code is loaded when first rendered (a dynamic import, its own chunk), so that
 * a page's initial bundle stays within its budget (scripts/build.mjs checks it; docs/architecture.md
 * lists the budgets). While loading they show a "Loading the …" line; a failed load is an alert.
 */
import { Component, lazy, Suspense, type ComponentType, type ReactNode } from "react";
import { Spinner } from "./ui";

class ChunkErrorBoundary extends Component<{ what: string; children: ReactNode }, { error: string | null }> {
  override state = { error: null as string | null };
  static getDerivedStateFromError(err: unknown) {
    return { error: err instanceof Error ? err.message : String(err) };
  }
  override render() {
    if (this.state.error === null) return this.props.children;
    return (
      <div className="error-banner" role="alert">
        Could not load the {this.props.what}: {this.state.error}. Reload the page to try again.
      </div>
    );
  }
}

export function lazyComponent<P extends object>(load: () => Promise<ComponentType<P>>, what: string): (props: P) => ReactNode {
  const Lazy = lazy(() => load().then((c) => ({ default: c })));
  const Loaded = Lazy as unknown as ComponentType<P>;
  function LazyComponent(props: P) {
    return (
      <ChunkErrorBoundary what={what}>
        <Suspense
          fallback={
            <p className="panel-loading" role="status">
              <Spinner decorative /> Loading the {what}…
            </p>
          }
        >
          <Loaded {...props} />
        </Suspense>
      </ChunkErrorBoundary>
    );
  }
  return LazyComponent;
}

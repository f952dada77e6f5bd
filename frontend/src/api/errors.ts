/** The one error every failed request becomes. */
import type { Issue } from "../graph/types";

/** A request that failed: its HTTP status (0 when the server did not answer) and the server's `{detail, issues}` body. */
export class ApiError extends Error {
  readonly status: number;
  readonly body: { detail?: string; issues?: Issue[]; [key: string]: unknown } | null;

  constructor(status: number, message: string, body: ApiError["body"]) {
    super(message);
    this.status = status;
    this.body = body;
  }

  get issues(): Issue[] {
    return Array.isArray(this.body?.issues) ? this.body.issues : [];
  }
}

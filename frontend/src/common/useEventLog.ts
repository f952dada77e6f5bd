/**
 * One event-log follower (./eventLog.ts) for a component: the run console, the Tests panel's
 * suite run and the Load panel's load test follow their logs through it. It lives as long as the
 * component and is closed when the component unmounts; `follow` another log closes the one before.
 */
import { useEffect, useState } from "react";
import { EventLogFollower } from "./eventLog";

export function useEventLog(): EventLogFollower {
  const [follower] = useState(() => new EventLogFollower());
  useEffect(() => () => follower.close(), [follower]);
  return follower;
}

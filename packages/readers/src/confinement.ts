/**
 * Which effects a kernel layer confines in a run (the backends that really enforce), as a reader of
 * code is told it: where the kernel decides what a program may open, run or reach, a reader need not
 * refuse the code for being able to (docs/DESIGN.md, "What each layer decides, by config").
 */
export interface Confinement {
  files: boolean;
  exec: boolean;
  network: boolean;
}

/** Nothing confined: C-app, or an L3 capability without a backend. */
export const UNCONFINED: Confinement = { files: false, exec: false, network: false };

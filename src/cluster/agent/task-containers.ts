// The containers an agent runs for its node's tasks (task ID → container ID), adopted once from the
// local engine after a restart, and which of them may have secret and config files on this node
// (files leave when the container ends, or at once when none was made).
import type { Logger } from '../../util/log.ts';
import type { TaskRuntime } from './task-runtime.ts';

export class TaskContainers {
  /** task ID → container ID */
  private readonly byTask = new Map<string, string>();
  /** Tasks whose secret and config files may be on this node (written here, or adopted). */
  private readonly withFiles = new Set<string>();
  private adopted = false;

  get(taskId: string): string | undefined {
    return this.byTask.get(taskId);
  }

  set(taskId: string, cid: string): void {
    this.byTask.set(taskId, cid);
  }

  /** The task a container runs, if it is one of these. */
  taskOf(cid: string): string | undefined {
    return [...this.byTask].find(([, c]) => c === cid)?.[0];
  }

  /** The task containers the local engine already runs (after a restart), taken over once. */
  async adopt(rt: TaskRuntime): Promise<void> {
    if (this.adopted) return;
    // Adopted containers may have files from before the restart: checked once they end.
    for (const c of await rt.list()) {
      this.byTask.set(c.taskId, c.id);
      this.withFiles.add(c.taskId);
    }
    this.adopted = true;
  }

  /** The task's secret and config files are about to be written on this node. */
  filesWritten(taskId: string): void {
    this.withFiles.add(taskId);
  }

  /** The task's files leave this node, if it may have any. */
  async removeFiles(rt: TaskRuntime, taskId: string, log: Logger): Promise<void> {
    if (!this.withFiles.delete(taskId)) return;
    await rt.removeFiles(taskId).catch((e: Error) => log.debug("removing a task's files failed", { task: taskId, error: e.message }));
  }

  /** The containers of tasks not in `known`, forgotten here: [task ID, container ID] to remove. */
  dropUnknown(known: Set<string>): Array<[string, string]> {
    const gone = [...this.byTask].filter(([taskId]) => !known.has(taskId));
    for (const [taskId] of gone) {
      this.byTask.delete(taskId);
      this.withFiles.delete(taskId);
    }
    return gone;
  }
}

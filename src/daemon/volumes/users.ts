// Which containers use which volumes ("in use" means referenced by any container, running or not):
// the container store's answer, plus the containers being created, whose volumes count as used
// before their record exists.
import type { VolumeUser } from './contract.ts';

export class VolumeUsers {
  /** Containers being created: their volumes count as used before the record exists. */
  private readonly pending = new Map<string, string[]>();

  /** `users`: which containers reference which volumes (daemon/containers/volume-users.ts). */
  constructor(private readonly users?: () => VolumeUser[]) {}

  /** A container being created references `names`. */
  reserve(containerId: string, names: string[]): void {
    this.pending.set(containerId, names);
  }

  /** A container's creation failed, or it was removed. */
  drop(containerId: string): void {
    this.pending.delete(containerId);
  }

  all(): VolumeUser[] {
    const list = this.users?.() ?? [];
    const known = new Set(list.map((u) => u.id));
    for (const [id, volumes] of this.pending) {
      if (known.has(id)) this.pending.delete(id);
      else list.push({ id, running: false, volumes });
    }
    return list;
  }

  /** The IDs of the containers that use volume `name`. */
  of(name: string, all = this.all()): string[] {
    return all.filter((u) => u.volumes.includes(name)).map((u) => u.id);
  }
}

// Docker Engine API wire types for volumes: the Volume object and the create request.

/** The API's Volume object (UsageData only for system df). */
export interface VolumeView {
  CreatedAt: string;
  Driver: string;
  Labels: Record<string, string> | null;
  Mountpoint: string;
  Name: string;
  Options: Record<string, string> | null;
  Scope: 'local' | 'global';
  UsageData?: { Size: number; RefCount: number };
}

/** POST /volumes/create */
export interface VolumeCreateRequest {
  Name?: string;
  Driver?: string;
  DriverOpts?: Record<string, string> | null;
  Labels?: Record<string, string> | null;
}

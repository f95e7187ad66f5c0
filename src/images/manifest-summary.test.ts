// manifestSummaries over a content store held in a map: a single manifest, an index with an image
// of this platform held whole, one of another platform not held, and a buildkit attestation.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { describe, test } from 'node:test';
import { isLayerType, manifestSummaries, type ManifestSummaryDeps, type WireDescriptor } from './manifest-summary.ts';

const OCI_MANIFEST = 'application/vnd.oci.image.manifest.v1+json';
const OCI_INDEX = 'application/vnd.oci.image.index.v1+json';
const LAYER = 'application/vnd.oci.image.layer.v1.tar+gzip';

function store() {
  const blobs = new Map<string, Buffer>();
  const put = (value: unknown, mediaType: string): WireDescriptor => {
    const bytes = Buffer.from(typeof value === 'string' ? value : JSON.stringify(value));
    const digest = 'sha256:' + createHash('sha256').update(bytes).digest('hex');
    blobs.set(digest, bytes);
    return { mediaType, digest, size: bytes.length };
  };
  const deps = (containers: Record<string, string[]> = {}, unpacked = 1000): ManifestSummaryDeps => ({
    has: async (d) => blobs.has(d),
    readJson: async (d) => {
      const b = blobs.get(d);
      if (!b) throw new Error(`not found: ${d}`);
      return JSON.parse(b.toString('utf8'));
    },
    unpacked: async (chain) => chain.length * unpacked,
    containersOf: (id) => containers[id] ?? [],
  });
  return { blobs, put, deps };
}

function image(s: ReturnType<typeof store>, arch: string, layerText: string) {
  const layer = s.put(layerText, LAYER);
  const config = s.put(
    { architecture: arch, os: 'linux', variant: arch === 'arm' ? 'v7' : undefined, rootfs: { type: 'layers', diff_ids: [layer.digest] } },
    'application/vnd.oci.image.config.v1+json',
  );
  const manifest = s.put({ schemaVersion: 2, mediaType: OCI_MANIFEST, config, layers: [layer] }, OCI_MANIFEST);
  return { layer, config, manifest };
}

describe('manifestSummaries', () => {
  test('a single manifest: available, sizes of config, layer and unpacked chain, platform from the config, containers', async () => {
    const s = store();
    const img = image(s, 'amd64', 'layer-one');
    const [m, ...rest] = await manifestSummaries(img.manifest, s.deps({ [img.config.digest]: ['c1', 'c2'] }, 4096));
    assert.equal(rest.length, 0);
    assert.equal(m!.ID, img.manifest.digest);
    assert.deepEqual(m!.Descriptor, img.manifest);
    assert.equal(m!.Available, true);
    assert.equal(m!.Kind, 'image');
    const content = img.manifest.size + img.config.size + img.layer.size;
    assert.deepEqual(m!.Size, { Content: content, Total: content + 4096 });
    assert.deepEqual(m!.ImageData, {
      Platform: { architecture: 'amd64', os: 'linux' },
      Size: { Unpacked: 4096 },
      Containers: ['c1', 'c2'],
    });
    assert.equal(m!.AttestationData, undefined);
  });

  test('an index: a held image, one of another platform whose layer is missing, an attestation, and an unheld manifest', async () => {
    const s = store();
    const amd = image(s, 'amd64', 'amd-layer');
    const arm = image(s, 'arm', 'arm-layer');
    s.blobs.delete(arm.layer.digest); // pulled for amd64 only: the arm manifest and config are here, its layer not
    const att = s.put(
      { schemaVersion: 2, mediaType: OCI_MANIFEST, config: amd.config, layers: [s.put('{}', 'application/vnd.in-toto+json')] },
      OCI_MANIFEST,
    );
    const gone = {
      mediaType: OCI_MANIFEST,
      digest: 'sha256:' + 'e'.repeat(64),
      size: 500,
      platform: { architecture: 's390x', os: 'linux' },
    };
    const entries = [
      { ...amd.manifest, platform: { architecture: 'amd64', os: 'linux' } },
      { ...arm.manifest, platform: { architecture: 'arm', os: 'linux', variant: 'v7' } },
      {
        ...att,
        platform: { architecture: 'unknown', os: 'unknown' },
        annotations: { 'vnd.docker.reference.type': 'attestation-manifest', 'vnd.docker.reference.digest': amd.manifest.digest },
      },
      gone,
    ];
    const index = s.put({ schemaVersion: 2, mediaType: OCI_INDEX, manifests: entries }, OCI_INDEX);
    const list = await manifestSummaries(index, s.deps({}, 10));
    assert.deepEqual(
      list.map((m) => [m.ID, m.Kind, m.Available]),
      [
        [amd.manifest.digest, 'image', true],
        [arm.manifest.digest, 'image', false],
        [att.digest, 'attestation', true],
        [gone.digest, 'image', false],
      ],
    );
    assert.deepEqual(list[0]!.Descriptor.platform, { architecture: 'amd64', os: 'linux' });
    assert.equal(list[0]!.ImageData!.Containers, null, 'no container uses it');
    // Missing layer: content counts what is held; no unpacked size for an unavailable image.
    assert.deepEqual(list[1]!.Size, { Content: arm.manifest.size + arm.config.size, Total: arm.manifest.size + arm.config.size });
    assert.deepEqual(list[1]!.ImageData, {
      Platform: { architecture: 'arm', os: 'linux', variant: 'v7' },
      Size: { Unpacked: 0 },
      Containers: null,
    });
    assert.deepEqual(list[2]!.AttestationData, { For: amd.manifest.digest });
    assert.equal(list[2]!.ImageData, undefined);
    assert.deepEqual(list[3]!.Size, { Content: 0, Total: 0 });
    assert.deepEqual(list[3]!.ImageData!.Platform, { architecture: 's390x', os: 'linux' });
  });

  test('unknown kinds: an unknown/unknown platform without attestation annotations, and layers of no layer type', async () => {
    const s = store();
    const amd = image(s, 'amd64', 'x');
    const odd = s.put(
      {
        schemaVersion: 2,
        mediaType: OCI_MANIFEST,
        config: amd.config,
        layers: [s.put('sig', 'application/vnd.dev.cosign.simplesigning.v1+json')],
      },
      OCI_MANIFEST,
    );
    const index = s.put({ manifests: [{ ...amd.manifest, platform: { architecture: 'unknown', os: 'unknown' } }, odd] }, OCI_INDEX);
    const list = await manifestSummaries(index, s.deps());
    assert.deepEqual(
      list.map((m) => [m.Kind, m.ImageData, m.AttestationData]),
      [
        ['unknown', undefined, undefined],
        ['unknown', undefined, undefined],
      ],
    );
  });

  test('an index not held locally has no reachable manifests', async () => {
    const s = store();
    assert.deepEqual(await manifestSummaries({ mediaType: OCI_INDEX, digest: 'sha256:' + 'a'.repeat(64), size: 10 }, s.deps()), []);
  });

  test('layer types as containerd tells them', () => {
    assert.equal(isLayerType('application/vnd.oci.image.layer.v1.tar+zstd'), true);
    assert.equal(isLayerType('application/vnd.docker.image.rootfs.diff.tar.gzip'), true);
    assert.equal(isLayerType('application/vnd.docker.image.rootfs.diff.tar.gzip+encrypted'), true);
    assert.equal(isLayerType('application/vnd.in-toto+json'), false);
  });
});

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { emptyFrame, encodeStats, statsFrame, u64, zeroCpu, ZERO_TIME, type Sample } from './wire.ts';

test('u64 keeps exact digits: numbers while safe, bigint beyond 2^53', () => {
  assert.equal(u64('42\n'), 42);
  assert.equal(u64('9007199254740991'), Number.MAX_SAFE_INTEGER);
  assert.equal(u64('9223372036854771712'), 9223372036854771712n);
  assert.equal(u64('max'), 0);
  assert.equal(u64(undefined), 0);
});

test('encodeStats writes bigints as exact JSON numbers', () => {
  const text = encodeStats({ limit: 9223372036854771712n, n: 1 });
  assert.equal(text, '{"limit":9223372036854771712,"n":1}');
});

const sample = (readNs: bigint, total: number): Sample => ({
  readNs,
  mono: 0,
  pids: { current: 1 },
  blkio: {
    io_service_bytes_recursive: [],
    io_serviced_recursive: [],
    io_queue_recursive: [],
    io_service_time_recursive: [],
    io_wait_time_recursive: [],
    io_merged_recursive: [],
    io_time_recursive: [],
    sectors_recursive: [],
  },
  cpu: {
    cpu_usage: { total_usage: total, usage_in_kernelmode: 0, usage_in_usermode: total },
    system_cpu_usage: 5,
    online_cpus: 2,
    throttling_data: { periods: 0, throttled_periods: 0, throttled_time: 0 },
  },
  memory: { usage: 10, stats: { inactive_file: 0 }, limit: 100 },
});

test('statsFrame: dockerd key order, precpu and preread from the previous sample', () => {
  const prev = sample(1_700_000_000_000_000_000n, 100);
  const cur = sample(1_700_000_001_000_000_000n, 300);
  const f = statsFrame({ name: '/c', id: 'abc' }, cur, prev);
  assert.deepEqual(Object.keys(f), [
    'read',
    'preread',
    'pids_stats',
    'blkio_stats',
    'num_procs',
    'storage_stats',
    'cpu_stats',
    'precpu_stats',
    'memory_stats',
    'name',
    'id',
  ]);
  assert.equal(f.preread, '2023-11-14T22:13:20Z');
  assert.equal((f.precpu_stats as Sample['cpu']).cpu_usage.total_usage, 100);
  const withNet = statsFrame(
    { name: '/c', id: 'abc' },
    {
      ...cur,
      networks: {
        eth0: { rx_bytes: 1, rx_packets: 1, rx_errors: 0, rx_dropped: 0, tx_bytes: 2, tx_packets: 2, tx_errors: 0, tx_dropped: 0 },
      },
    },
    undefined,
  );
  assert.equal(Object.keys(withNet).at(-1), 'networks');
  assert.equal(withNet.preread, ZERO_TIME);
  assert.deepEqual(withNet.precpu_stats, zeroCpu());
});

test("emptyFrame is Go's zero StatsResponse with name and id", () => {
  const text = encodeStats(emptyFrame({ name: '/x', id: 'id1' }));
  assert.equal(
    text,
    '{"read":"0001-01-01T00:00:00Z","preread":"0001-01-01T00:00:00Z","pids_stats":{},"blkio_stats":{"io_service_bytes_recursive":null,"io_serviced_recursive":null,"io_queue_recursive":null,"io_service_time_recursive":null,"io_wait_time_recursive":null,"io_merged_recursive":null,"io_time_recursive":null,"sectors_recursive":null},"num_procs":0,"storage_stats":{},"cpu_stats":{"cpu_usage":{"total_usage":0,"usage_in_kernelmode":0,"usage_in_usermode":0},"throttling_data":{"periods":0,"throttled_periods":0,"throttled_time":0}},"precpu_stats":{"cpu_usage":{"total_usage":0,"usage_in_kernelmode":0,"usage_in_usermode":0},"throttling_data":{"periods":0,"throttled_periods":0,"throttled_time":0}},"memory_stats":{},"name":"/x","id":"id1"}',
  );
});

// The pure parts of sandbox set-up: which network carries the default route and the published
// ports, and dockerd's wording of a failed set-up (the cause's status kept).
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { EngineError, invalidParameter } from '../../errors.ts';
import { bridgeNetwork } from '../../../test/helpers/network-records.ts';
import { chooseGateway, setupError } from './endpoint-plan.ts';

describe('sandboxes', () => {
  test('chooseGateway: internal networks never; highest GwPriority, then the first name', () => {
    const a = bridgeNetwork('a');
    const b = bridgeNetwork('b');
    const internal = bridgeNetwork('0-internal', {}, { Internal: true });
    assert.equal(
      chooseGateway([
        { net: b, priority: 0 },
        { net: a, priority: 0 },
      ])?.Name,
      'a',
    );
    assert.equal(
      chooseGateway([
        { net: a, priority: 0 },
        { net: b, priority: 10 },
      ])?.Name,
      'b',
    );
    assert.equal(
      chooseGateway([
        { net: internal, priority: 100 },
        { net: b, priority: -1 },
      ])?.Name,
      'b',
    );
    assert.equal(chooseGateway([{ net: internal, priority: 0 }]), undefined);
    assert.equal(chooseGateway([]), undefined);
  });

  test("setupError: port failures name the endpoint; the cause's code is kept, anything else is a 500", () => {
    const rec = { Id: 'c1', Name: '/web', HostsPath: '', Config: {}, HostConfig: {}, State: { Running: false } };
    const sb = { key: 'k', sandboxId: 'sb1', endpoints: [], ports: [] };
    const ports = setupError(invalidParameter('Bind for 0.0.0.0:80 failed: port is already allocated'), rec, sb);
    assert.ok(ports instanceof EngineError);
    assert.equal(ports.code, 'INVALID_PARAMETER');
    assert.equal(
      ports.message,
      'failed to set up container networking: driver failed programming external connectivity on endpoint web (sb1): Bind for 0.0.0.0:80 failed: port is already allocated',
    );
    const other = setupError(new Error('RTNETLINK answers: File exists'), rec, sb);
    assert.ok(other instanceof EngineError);
    assert.equal(other.code, 'INTERNAL');
    assert.equal(other.message, 'failed to set up container networking: RTNETLINK answers: File exists');
  });
});

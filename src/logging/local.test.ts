import { runDriverSuite } from './driver-suite.ts';

runDriverSuite('local');

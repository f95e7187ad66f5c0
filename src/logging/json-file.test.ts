import { runDriverSuite } from './driver-suite.ts';

runDriverSuite('json-file');

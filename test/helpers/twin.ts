// Imported first by each file of test/e2e/twin/: the e2e file it imports next runs again with the
// `engine` CLI as its client (cli-client.ts), each test named in the record of calls engine lacked.
import { trackTests } from './cli-client.ts';

process.env.ENGINE_TEST_CLI = 'engine';
trackTests();

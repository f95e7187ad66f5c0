// remote-log-drivers.test.ts again with the engine CLI as the client (test/helpers/twin.ts).
import '../../helpers/twin.ts';
import '../remote-log-drivers.test.ts';

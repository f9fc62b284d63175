import { parseArgs } from 'node:util';
import { runUp } from './up';

const usage = `askbus — a natural-language endpoint for schema.org site data

Usage: askbus <command> [options]

Commands:
  up        start NATS (or use NATS_URL), every service, load the demo sites, serve HTTP

Environment for up: PORT (8000), HOST (127.0.0.1), NATS_URL, ASKBUS_DATA_DIR (./.data),
  ASKBUS_RANKERS (2), ASKBUS_RANK_DELAY_MS (0), ASKBUS_DEMO (1; 0 skips the demo sites)
`;

const { positionals, values } = parseArgs({
  allowPositionals: true,
  options: { help: { type: 'boolean', short: 'h' } },
});
const command = positionals[0];
if (values.help || !command) {
  console.log(usage);
  process.exit(command || values.help ? 0 : 1);
}
try {
  if (command === 'up') await runUp();
  else {
    console.error(`unknown command "${command}"\n\n${usage}`);
    process.exit(1);
  }
} catch (err) {
  console.error(`askbus ${command}: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
}

import { parseArgs } from 'node:util';
import { runUp } from './up';
import { runClient } from './client-main';

const usage = `askbus — a natural-language endpoint for schema.org site data

Usage: askbus <command> [options]

Commands:
  up        start NATS (or use NATS_URL), every service, load the demo sites, serve HTTP
  ask       ask a running gateway a question; prints results as they stream in
            (askbus ask --help: --site, --mode, --max, --json, --url / ASKBUS_URL,
            --api-key / ASKBUS_API_KEY for a gateway that requires keys)
  sites     list the sites a running gateway can answer about (askbus sites --help)
  load      load schema.org data (files, a directory, an http(s) URL) into the retriever;
            askbus load --help for formats and options (uses NATS_URL)

Environment for up: PORT (8000), HOST (127.0.0.1), NATS_URL, ASKBUS_DATA_DIR (./.data),
  ASKBUS_RANKERS (2), ASKBUS_RANK_DELAY_MS (0), ASKBUS_DEMO (1; 0 skips the demo sites)
`;

const clientExit = await runClient(process.argv.slice(2));
if (clientExit !== undefined) process.exit(clientExit);
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

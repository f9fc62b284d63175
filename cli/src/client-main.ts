/**
 * The commands that talk to a running system (`ask`, `sites`, `load`), as one entry point that
 * `npm run build` bundles into cli/build/askbus-client.mjs: the bin runs them from plain
 * JavaScript, so they start in well under a second. `up` runs under tsx (it imports every
 * service's declaration as TypeScript).
 */
import { runClientCommand } from './ask';
import { loadMain } from './load';

/** Runs a client command; undefined for any other command. */
export async function runClient(argv: readonly string[]): Promise<number | undefined> {
  const [command, ...rest] = argv;
  if (command === 'ask' || command === 'sites') return runClientCommand(command, rest);
  if (command === 'load') {
    try {
      await loadMain(rest);
      return 0;
    } catch (err) {
      console.error(`askbus load: ${err instanceof Error ? err.message : String(err)}`);
      return 1;
    }
  }
  return undefined;
}

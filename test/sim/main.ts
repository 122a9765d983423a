// Starts one simulator from the command line, for demos and manual runs (never a production path):
//   node --import tsx test/sim/main.ts alpaca|snaptrade [--port N] [--scenario NAME]
// Prints the base URL and the credentials the scenario accepts, then serves until interrupted.
import { ALPACA_SCENARIOS, startAlpacaSim } from './alpaca.ts';
import { SNAPTRADE_SCENARIOS, startSnapTradeSim } from './snaptrade.ts';

function option(args: string[], name: string): string | undefined {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : undefined;
}

async function main(args: string[]): Promise<number> {
  const which = args[0];
  const port = Number(option(args, 'port') ?? '0');
  const scenarioName = option(args, 'scenario') ?? 'day';
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    console.error('--port must be an integer from 0 to 65535');
    return 2;
  }
  if (which === 'alpaca') {
    const make = ALPACA_SCENARIOS[scenarioName];
    if (!make) return unknown(scenarioName, Object.keys(ALPACA_SCENARIOS));
    const sim = await startAlpacaSim({ scenario: make(), port });
    const k = sim.scenario.keys[0]!;
    console.log(`Alpaca simulator (${scenarioName}) at ${sim.url}\nLEDGER_ALPACA_TRADING_URL=${sim.url}\napi_key_id=${k.keyId}\napi_secret=${k.secretKey}`);
  } else if (which === 'snaptrade') {
    const make = SNAPTRADE_SCENARIOS[scenarioName];
    if (!make) return unknown(scenarioName, Object.keys(SNAPTRADE_SCENARIOS));
    const sim = await startSnapTradeSim({ scenario: make(), port });
    const p = sim.scenario.partner;
    console.log(`SnapTrade simulator (${scenarioName}) at ${sim.url}\nLEDGER_SNAPTRADE_URL=${sim.url}\nLEDGER_SNAPTRADE_CLIENT_ID=${p.clientId}\nLEDGER_SNAPTRADE_CONSUMER_KEY=${p.consumerKey}`);
  } else {
    console.error('usage: main.ts alpaca|snaptrade [--port N] [--scenario NAME]');
    return 2;
  }
  return new Promise<number>(() => {}); // serve until interrupted
}

function unknown(name: string, known: string[]): number {
  console.error(`unknown scenario ${JSON.stringify(name)}; one of ${known.join(', ')}`);
  return 2;
}

main(process.argv.slice(2)).then((code) => process.exit(code));

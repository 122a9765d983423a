// A local Esplora-style block source on 127.0.0.1, port 0, serving a SimChain: `GET /block-height/<h>`
// (block hash as text, 404 "Block not found") and `GET /block/<hash>/header` (header as hex).
// `tamperHeaders` serves a header altered in one byte, as a lying source would. Test fixture only.

import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { toHex } from '../../src/method/ots/codec.ts';
import type { SimChain } from './bitcoin-chain.ts';

export type EsploraSim = { url: string; tamperHeaders: boolean; requests: string[]; close(): Promise<void> };

export async function startEsploraSim(chain: SimChain): Promise<EsploraSim> {
  const sim: EsploraSim = { url: '', tamperHeaders: false, requests: [], close: () => new Promise((r) => server.close(() => r())) };
  const server = createServer((req, res) => {
    const path = req.url ?? '';
    sim.requests.push(path);
    const text = (status: number, body: string) => res.writeHead(status, { 'Content-Type': 'text/plain' }).end(body);
    let m = /^\/block-height\/(\d+)$/.exec(path);
    if (req.method === 'GET' && m) {
      const block = chain.byHeight(Number(m[1]));
      return block ? text(200, block.hash) : text(404, 'Block not found');
    }
    m = /^\/block\/([0-9a-f]{64})\/header$/.exec(path);
    if (req.method === 'GET' && m) {
      const block = chain.byHash(m[1]!);
      if (!block) return text(404, 'Block not found');
      const header = block.header.slice();
      if (sim.tamperHeaders) header[40] = header[40]! ^ 0xff;
      return text(200, toHex(header));
    }
    text(404, 'Not found');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  sim.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return sim;
}

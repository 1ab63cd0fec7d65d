// What ./dispatch runs. Exits explicitly: keep-alive sockets of HTTP clients must not hold a hook open.
import { main } from './main.ts';

process.exit(await main(process.env));

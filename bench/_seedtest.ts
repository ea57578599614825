import { ensureSeed, sizeFromEnv } from '/work/main/bench/seed.ts';
const info = await ensureSeed(sizeFromEnv());
console.log(info);

// The contract between bench/index.ts and every bench/*.bench.ts.
export interface BenchOptions {
  /** how many Kubeflow profiles the scale benches create (default 1000) */
  profiles: number;
  /** print the rows as JSON instead of a table */
  json: boolean;
  /** fewer rounds, for a quick look (CI smoke) */
  quick: boolean;
  /** a scratch folder for this bench run, removed afterwards */
  workDir: string;
  /** the volumes bench's S3: 'https' (default, as every S3 a user runs) or plain 'http' */
  s3Scheme?: 'https' | 'http';
}

export interface BenchRow {
  bench: string;
  metric: string;
  value: number;
  unit: string;
  /** e.g. "<= 250 ms" */
  target?: string;
  verdict?: 'met' | 'missed';
  note?: string;
}

export type Bench = (opts: BenchOptions) => Promise<BenchRow[]>;

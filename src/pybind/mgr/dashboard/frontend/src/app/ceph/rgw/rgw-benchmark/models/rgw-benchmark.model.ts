/** What the rgwbench module answers, as `ceph rgwbench ... -f json` prints it. */

export const OVERRIDE_KEYS = [
  'duration',
  'warmup',
  'repeats',
  'rate',
  'rates',
  'objects',
  'multipart_threshold',
  'part_size',
  'range',
  'processes',
  'payload_signing'
] as const;

export type OverrideKey = typeof OVERRIDE_KEYS[number];
export type BenchmarkOverrides = Partial<Record<OverrideKey, string>>;

export interface BenchmarkProfile {
  name: string;
  builtin?: boolean;
  description?: string;
  estimated_s?: number;
}

export interface BenchmarkPlan {
  plan: Record<string, any>;
  text: string;
}

export interface BenchmarkLiveFigures {
  ops_per_s?: number;
  mib_per_s?: number;
  phase?: string;
  [key: string]: any;
}

export interface BenchmarkLive {
  run_id: string;
  profile: string;
  state: string;
  started?: number;
  progress?: string;
  fraction?: number;
  current?: Record<string, any> | null;
  live?: BenchmarkLiveFigures | null;
}

export interface BenchmarkFinding {
  id: string;
  level: string;
  summary: string;
  evidence?: string[];
  fix?: string | null;
  variant?: string;
  workload?: string;
}

export interface BenchmarkRunSummary {
  run_id: string;
  profile: string;
  state: string;
  started?: number;
  finished?: number | null;
  variants?: string[];
}

export interface BenchmarkInterval {
  low: number | null;
  high: number | null;
  significant?: boolean;
}

export interface BenchmarkComparisonRow {
  workload: string;
  variant: string;
  significant?: boolean | null;
  noise_pct?: number | null;
  tested?: string | null;
  intervals?: Record<string, BenchmarkInterval>;
  [figure: string]: any;
}

export interface BenchmarkDaemonFigures {
  daemon?: string;
  host?: string;
  cpu_cores?: number | null;
  rss_mib?: number | null;
  rss_mib_max?: number | null;
}

export interface BenchmarkServerFigures {
  daemons?: number | null;
  cpu_cores?: number | null;
  rss_mib?: number | null;
  per_daemon?: BenchmarkDaemonFigures[] | null;
}

export interface BenchmarkWorkloadResult {
  name: string;
  op?: string;
  ops_per_s?: number | null;
  throughput_mib_s?: number | null;
  latency_ms?: Record<string, number | null>;
  errors?: number | null;
  error?: string | null;
  rgw?: BenchmarkServerFigures | null;
  haproxy?: BenchmarkServerFigures | null;
  per_second?: { t: number; ops: number }[] | null;
}

export interface BenchmarkVariantResult {
  name: string;
  error?: string | null;
  workloads: BenchmarkWorkloadResult[];
}

export interface BenchmarkRun extends BenchmarkRunSummary {
  baseline?: string;
  ceph_version?: string;
  error?: string | null;
  progress?: string;
  fraction?: number;
  comparison?: BenchmarkComparisonRow[] | null;
  findings?: BenchmarkFinding[] | null;
  variants?: any[];
}

/** A figure of the comparison table: its column and how it reads. */
export interface ComparisonFigure {
  key: string;
  label: string;
}

export const COMPARISON_FIGURES: ComparisonFigure[] = [
  { key: 'ops_pct', label: 'ops/s' },
  { key: 'throughput_pct', label: 'MiB/s' },
  { key: 'latency_mean_pct', label: 'latency mean' },
  { key: 'latency_p50_pct', label: 'latency p50' },
  { key: 'latency_p99_pct', label: 'latency p99' },
  { key: 'rgw_cpu_pct', label: 'RGW CPU' },
  { key: 'rgw_rss_pct', label: 'RGW memory' },
  { key: 'haproxy_cpu_pct', label: 'HAProxy CPU' }
];

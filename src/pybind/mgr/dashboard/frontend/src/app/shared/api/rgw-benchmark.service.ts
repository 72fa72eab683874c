import { HttpClient, HttpParams } from '@angular/common/http';
import { Injectable } from '@angular/core';

import { Observable } from 'rxjs';

import {
  BenchmarkFinding,
  BenchmarkLive,
  BenchmarkOverrides,
  BenchmarkPlan,
  BenchmarkProfile,
  BenchmarkRun,
  BenchmarkRunSummary
} from '~/app/ceph/rgw/rgw-benchmark/models/rgw-benchmark.model';

/**
 * The rgwbench mgr module's runs, plans and findings, through the dashboard's
 * `api/rgwbench` endpoints (experimental API version).
 */
@Injectable({
  providedIn: 'root'
})
export class RgwBenchmarkService {
  private readonly url = 'api/rgwbench';
  private readonly headers = { Accept: 'application/vnd.ceph.api.v0.1+json' };

  constructor(private http: HttpClient) {}

  status(): Observable<Record<string, any>> {
    return this.http.get<Record<string, any>>(`${this.url}/status`, { headers: this.headers });
  }

  live(): Observable<BenchmarkLive | null> {
    return this.http.get<BenchmarkLive | null>(`${this.url}/live`, { headers: this.headers });
  }

  findings(profile?: string): Observable<BenchmarkFinding[]> {
    let params = new HttpParams();
    if (profile) {
      params = params.set('profile', profile);
    }
    return this.http.get<BenchmarkFinding[]>(`${this.url}/findings`, {
      headers: this.headers,
      params
    });
  }

  profiles(): Observable<BenchmarkProfile[]> {
    return this.http.get<BenchmarkProfile[]>(`${this.url}/profile`, { headers: this.headers });
  }

  plan(profile: string, overrides: BenchmarkOverrides): Observable<BenchmarkPlan> {
    return this.http.post<BenchmarkPlan>(
      `${this.url}/profile/${encodeURIComponent(profile)}/plan`,
      { overrides },
      { headers: this.headers }
    );
  }

  start(profile: string, overrides: BenchmarkOverrides): Observable<{ run_id: string }> {
    // The form only calls this once the operator confirmed the plan shown.
    return this.http.post<{ run_id: string }>(
      `${this.url}/run`,
      { profile, overrides, confirm: true },
      { headers: this.headers }
    );
  }

  abort(): Observable<{ run_id: string }> {
    return this.http.post<{ run_id: string }>(`${this.url}/abort`, {}, { headers: this.headers });
  }

  list(): Observable<BenchmarkRunSummary[]> {
    return this.http.get<BenchmarkRunSummary[]>(`${this.url}/run`, { headers: this.headers });
  }

  get(runId: string): Observable<BenchmarkRun> {
    return this.http.get<BenchmarkRun>(`${this.url}/run/${encodeURIComponent(runId)}`, {
      headers: this.headers
    });
  }

  delete(runId: string): Observable<any> {
    return this.http.delete(`${this.url}/run/${encodeURIComponent(runId)}`, {
      headers: this.headers
    });
  }
}

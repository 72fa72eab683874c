import { HttpClientTestingModule, HttpTestingController } from '@angular/common/http/testing';
import { TestBed } from '@angular/core/testing';

import { configureTestBed } from '~/testing/unit-test-helper';
import { RgwBenchmarkService } from './rgw-benchmark.service';

describe('RgwBenchmarkService', () => {
  let service: RgwBenchmarkService;
  let httpTesting: HttpTestingController;
  const experimental = 'application/vnd.ceph.api.v0.1+json';

  configureTestBed({
    imports: [HttpClientTestingModule],
    providers: [RgwBenchmarkService]
  });

  beforeEach(() => {
    service = TestBed.inject(RgwBenchmarkService);
    httpTesting = TestBed.inject(HttpTestingController);
  });

  afterEach(() => {
    httpTesting.verify();
  });

  it('should list runs with the experimental API version', () => {
    service.list().subscribe();
    const req = httpTesting.expectOne('api/rgwbench/run');
    expect(req.request.method).toBe('GET');
    expect(req.request.headers.get('Accept')).toBe(experimental);
  });

  it('should get one run', () => {
    service.get('r 1').subscribe();
    const req = httpTesting.expectOne('api/rgwbench/run/r%201');
    expect(req.request.method).toBe('GET');
  });

  it('should plan a profile with its overrides', () => {
    service.plan('quick', { duration: '5' }).subscribe();
    const req = httpTesting.expectOne('api/rgwbench/profile/quick/plan');
    expect(req.request.method).toBe('POST');
    expect(req.request.body).toEqual({ overrides: { duration: '5' } });
  });

  it('should start a run confirmed', () => {
    service.start('quick', {}).subscribe();
    const req = httpTesting.expectOne('api/rgwbench/run');
    expect(req.request.method).toBe('POST');
    expect(req.request.body).toEqual({ profile: 'quick', overrides: {}, confirm: true });
  });

  it('should abort', () => {
    service.abort().subscribe();
    const req = httpTesting.expectOne('api/rgwbench/abort');
    expect(req.request.method).toBe('POST');
  });

  it('should ask findings of one profile only when given', () => {
    service.findings('sse').subscribe();
    httpTesting.expectOne('api/rgwbench/findings?profile=sse');
    service.findings().subscribe();
    httpTesting.expectOne('api/rgwbench/findings');
  });

  it('should delete a run', () => {
    service.delete('r-1').subscribe();
    const req = httpTesting.expectOne('api/rgwbench/run/r-1');
    expect(req.request.method).toBe('DELETE');
  });

  it('should get the live figures', () => {
    service.live().subscribe();
    httpTesting.expectOne('api/rgwbench/live').flush(null);
  });
});

import { Component, OnInit } from '@angular/core';
import { Router } from '@angular/router';

import { RgwBenchmarkService } from '~/app/shared/api/rgw-benchmark.service';
import { Permission } from '~/app/shared/models/permissions';
import { AuthStorageService } from '~/app/shared/services/auth-storage.service';
import {
  BenchmarkFinding,
  BenchmarkOverrides,
  BenchmarkPlan,
  BenchmarkProfile,
  OVERRIDE_KEYS,
  OverrideKey
} from '../models/rgw-benchmark.model';

interface OverrideField {
  key: OverrideKey;
  label: string;
  placeholder: string;
}

/**
 * Plan, then start: a run starts only from the plan shown for exactly the
 * profile and overrides in the form, once the operator confirmed it.
 */
@Component({
  selector: 'cd-rgw-benchmark-form',
  templateUrl: './rgw-benchmark-form.component.html'
})
export class RgwBenchmarkFormComponent implements OnInit {
  readonly fields: OverrideField[] = [
    { key: 'duration', label: $localize`Duration of each workload (s)`, placeholder: '' },
    { key: 'warmup', label: $localize`Warm-up (s)`, placeholder: '' },
    { key: 'repeats', label: $localize`Repeats`, placeholder: '' },
    { key: 'rate', label: $localize`Rate (ops/s over all agents)`, placeholder: '' },
    { key: 'rates', label: $localize`Rates, one workload each`, placeholder: '100,200,400' },
    { key: 'objects', label: $localize`Objects read (working set)`, placeholder: '' },
    { key: 'range', label: $localize`Range of each GET`, placeholder: '0-1MiB' },
    { key: 'multipart_threshold', label: $localize`Multipart threshold`, placeholder: '16MiB' },
    { key: 'part_size', label: $localize`Part size`, placeholder: '8MiB' },
    { key: 'processes', label: $localize`Engine processes per agent`, placeholder: '' },
    { key: 'payload_signing', label: $localize`Payload signing`, placeholder: '' }
  ];

  permission: Permission;
  profiles: BenchmarkProfile[] = [];
  profile: string = null;
  overrides: BenchmarkOverrides = {};
  plan: BenchmarkPlan = null;
  findings: BenchmarkFinding[] = null;
  confirmed = false;
  busy = false;
  error: string = null;
  private plannedFor: string = null;

  constructor(
    private rgwBenchmarkService: RgwBenchmarkService,
    private authStorageService: AuthStorageService,
    private router: Router
  ) {
    this.permission = this.authStorageService.getPermissions().rgw;
  }

  ngOnInit() {
    this.rgwBenchmarkService.profiles().subscribe((profiles) => {
      this.profiles = profiles;
      if (!this.profile && profiles.length) {
        this.profile = (profiles.find((p) => p.name === 'quick') || profiles[0]).name;
      }
    });
  }

  minutes(profile: BenchmarkProfile): number {
    return Math.max(1, Math.ceil((profile.estimated_s || 0) / 60));
  }

  /** The overrides given, as rgwbench takes them: text, empty ones left out. */
  givenOverrides(): BenchmarkOverrides {
    const given: BenchmarkOverrides = {};
    OVERRIDE_KEYS.forEach((key) => {
      const value = this.overrides[key];
      if (value !== undefined && value !== null && `${value}`.trim() !== '') {
        given[key] = `${value}`.trim();
      }
    });
    return given;
  }

  /** Any change to the form makes the plan shown stale: plan again before a start. */
  changed() {
    this.plan = null;
    this.confirmed = false;
    this.plannedFor = null;
  }

  showPlan() {
    const profile = this.profile;
    const overrides = this.givenOverrides();
    this.busy = true;
    this.error = null;
    this.changed();
    this.rgwBenchmarkService.findings(profile).subscribe((found) => (this.findings = found));
    this.rgwBenchmarkService.plan(profile, overrides).subscribe({
      next: (plan) => {
        this.plan = plan;
        this.plannedFor = JSON.stringify([profile, overrides]);
        this.busy = false;
      },
      error: (e) => this.refused(e, $localize`The plan could not be made`)
    });
  }

  canStart(): boolean {
    return (
      this.permission.create &&
      !this.busy &&
      this.confirmed &&
      this.plan !== null &&
      this.plannedFor === JSON.stringify([this.profile, this.givenOverrides()])
    );
  }

  start() {
    if (!this.canStart()) {
      return;
    }
    this.busy = true;
    this.error = null;
    this.rgwBenchmarkService.start(this.profile, this.givenOverrides()).subscribe({
      next: (started) => this.router.navigate(['/rgwbench/run', started.run_id]),
      error: (e) => this.refused(e, $localize`The run could not be started`)
    });
  }

  private refused(e: any, fallback: string) {
    this.busy = false;
    this.error = e?.error?.detail || fallback;
    e?.preventDefault?.();
  }
}

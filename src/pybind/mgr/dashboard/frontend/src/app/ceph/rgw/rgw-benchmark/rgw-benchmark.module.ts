import { CommonModule, DatePipe } from '@angular/common';
import { NgModule } from '@angular/core';
import { FormsModule } from '@angular/forms';
import { RouterModule, Routes } from '@angular/router';

import { AreaChartComponent } from '~/app/shared/components/area-chart/area-chart.component';
import { ActionLabels, URLVerbs } from '~/app/shared/constants/app.constants';
import { SharedModule } from '~/app/shared/shared.module';
import { RgwBenchmarkDetailsComponent } from './rgw-benchmark-details/rgw-benchmark-details.component';
import { RgwBenchmarkFindingsComponent } from './rgw-benchmark-findings/rgw-benchmark-findings.component';
import { RgwBenchmarkFormComponent } from './rgw-benchmark-form/rgw-benchmark-form.component';
import { RgwBenchmarkListComponent } from './rgw-benchmark-list/rgw-benchmark-list.component';
import { RgwBenchmarkLiveComponent } from './rgw-benchmark-live/rgw-benchmark-live.component';

@NgModule({
  imports: [CommonModule, FormsModule, RouterModule, SharedModule, AreaChartComponent],
  declarations: [
    RgwBenchmarkListComponent,
    RgwBenchmarkFormComponent,
    RgwBenchmarkDetailsComponent,
    RgwBenchmarkLiveComponent,
    RgwBenchmarkFindingsComponent
  ],
  providers: [DatePipe]
})
export class RgwBenchmarkModule {}

const routes: Routes = [
  { path: '', component: RgwBenchmarkListComponent },
  {
    path: URLVerbs.CREATE,
    component: RgwBenchmarkFormComponent,
    data: { breadcrumbs: ActionLabels.CREATE }
  },
  {
    path: 'run/:runId',
    component: RgwBenchmarkDetailsComponent,
    data: { breadcrumbs: 'Run' }
  }
];

@NgModule({
  imports: [RgwBenchmarkModule, RouterModule.forChild(routes)]
})
export class RoutedRgwBenchmarkModule {}

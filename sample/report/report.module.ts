import { Module } from '@nestjs/common';
import { ReportJob } from './report.job.js';

@Module({ providers: [ReportJob] })
export class ReportModule {}

ALTER TABLE "events" ALTER COLUMN "data" SET DATA TYPE json;--> statement-breakpoint
CREATE INDEX "locations_company_sync_idx" ON "locations" USING btree ("company_id","updated_at","uuid");--> statement-breakpoint
CREATE INDEX "customers_company_sync_idx" ON "customers" USING btree ("company_id","updated_at","uuid");--> statement-breakpoint
CREATE INDEX "job_photos_job_sync_idx" ON "job_photos" USING btree ("company_id","job_uuid","updated_at","uuid");--> statement-breakpoint
CREATE INDEX "jobs_company_sync_idx" ON "jobs" USING btree ("company_id","updated_at","uuid");--> statement-breakpoint
CREATE INDEX "estimates_company_sync_idx" ON "estimates" USING btree ("company_id","updated_at","uuid");--> statement-breakpoint
CREATE INDEX "templates_company_sync_idx" ON "templates" USING btree ("company_id","updated_at","uuid");--> statement-breakpoint
CREATE INDEX "invoices_company_sync_idx" ON "invoices" USING btree ("company_id","updated_at","uuid");--> statement-breakpoint
CREATE INDEX "payments_company_sync_idx" ON "payments" USING btree ("company_id","updated_at","uuid");
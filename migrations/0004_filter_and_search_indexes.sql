CREATE EXTENSION IF NOT EXISTS btree_gin;--> statement-breakpoint
DROP INDEX "customers_search_idx";--> statement-breakpoint
DROP INDEX "jobs_company_status_idx";--> statement-breakpoint
DROP INDEX "jobs_company_customer_idx";--> statement-breakpoint
DROP INDEX "jobs_company_location_idx";--> statement-breakpoint
DROP INDEX "jobs_company_assignee_idx";--> statement-breakpoint
DROP INDEX "jobs_search_idx";--> statement-breakpoint
DROP INDEX "estimates_company_status_idx";--> statement-breakpoint
DROP INDEX "estimates_company_customer_idx";--> statement-breakpoint
DROP INDEX "estimates_company_job_idx";--> statement-breakpoint
DROP INDEX "estimates_search_idx";--> statement-breakpoint
DROP INDEX "invoices_company_status_idx";--> statement-breakpoint
DROP INDEX "invoices_company_customer_idx";--> statement-breakpoint
DROP INDEX "invoices_company_job_idx";--> statement-breakpoint
DROP INDEX "invoices_search_idx";--> statement-breakpoint
DROP INDEX "payments_company_invoice_idx";--> statement-breakpoint
DROP INDEX "payments_company_customer_idx";--> statement-breakpoint
CREATE INDEX "payments_company_status_idx" ON "payments" USING btree ("company_id","status","created_at" DESC NULLS FIRST,"uuid" DESC NULLS FIRST) WHERE "payments"."deleted_at" is null;--> statement-breakpoint
CREATE INDEX "customers_search_idx" ON "customers" USING gin ("company_id","search_text" gin_trgm_ops);--> statement-breakpoint
CREATE INDEX "jobs_company_status_idx" ON "jobs" USING btree ("company_id","status","created_at" DESC NULLS FIRST,"uuid" DESC NULLS FIRST) WHERE "jobs"."deleted_at" is null;--> statement-breakpoint
CREATE INDEX "jobs_company_customer_idx" ON "jobs" USING btree ("company_id","customer_uuid","created_at" DESC NULLS FIRST,"uuid" DESC NULLS FIRST) WHERE "jobs"."deleted_at" is null;--> statement-breakpoint
CREATE INDEX "jobs_company_location_idx" ON "jobs" USING btree ("company_id","location_uuid","created_at" DESC NULLS FIRST,"uuid" DESC NULLS FIRST) WHERE "jobs"."deleted_at" is null;--> statement-breakpoint
CREATE INDEX "jobs_company_assignee_idx" ON "jobs" USING btree ("company_id","assigned_to_user_id","created_at" DESC NULLS FIRST,"uuid" DESC NULLS FIRST) WHERE "jobs"."deleted_at" is null;--> statement-breakpoint
CREATE INDEX "jobs_search_idx" ON "jobs" USING gin ("company_id","search_text" gin_trgm_ops);--> statement-breakpoint
CREATE INDEX "estimates_company_status_idx" ON "estimates" USING btree ("company_id","status","created_at" DESC NULLS FIRST,"uuid" DESC NULLS FIRST) WHERE "estimates"."deleted_at" is null;--> statement-breakpoint
CREATE INDEX "estimates_company_customer_idx" ON "estimates" USING btree ("company_id","customer_uuid","created_at" DESC NULLS FIRST,"uuid" DESC NULLS FIRST) WHERE "estimates"."deleted_at" is null;--> statement-breakpoint
CREATE INDEX "estimates_company_job_idx" ON "estimates" USING btree ("company_id","job_uuid","created_at" DESC NULLS FIRST,"uuid" DESC NULLS FIRST) WHERE "estimates"."deleted_at" is null;--> statement-breakpoint
CREATE INDEX "estimates_search_idx" ON "estimates" USING gin ("company_id","search_text" gin_trgm_ops);--> statement-breakpoint
CREATE INDEX "invoices_company_status_idx" ON "invoices" USING btree ("company_id","status","created_at" DESC NULLS FIRST,"uuid" DESC NULLS FIRST) WHERE "invoices"."deleted_at" is null;--> statement-breakpoint
CREATE INDEX "invoices_company_customer_idx" ON "invoices" USING btree ("company_id","customer_uuid","created_at" DESC NULLS FIRST,"uuid" DESC NULLS FIRST) WHERE "invoices"."deleted_at" is null;--> statement-breakpoint
CREATE INDEX "invoices_company_job_idx" ON "invoices" USING btree ("company_id","job_uuid","created_at" DESC NULLS FIRST,"uuid" DESC NULLS FIRST) WHERE "invoices"."deleted_at" is null;--> statement-breakpoint
CREATE INDEX "invoices_search_idx" ON "invoices" USING gin ("company_id","search_text" gin_trgm_ops);--> statement-breakpoint
CREATE INDEX "payments_company_invoice_idx" ON "payments" USING btree ("company_id","invoice_uuid","created_at" DESC NULLS FIRST,"uuid" DESC NULLS FIRST) WHERE "payments"."deleted_at" is null;--> statement-breakpoint
CREATE INDEX "payments_company_customer_idx" ON "payments" USING btree ("company_id","customer_uuid","created_at" DESC NULLS FIRST,"uuid" DESC NULLS FIRST) WHERE "payments"."deleted_at" is null;
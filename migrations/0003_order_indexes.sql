DROP INDEX "users_company_order_idx";--> statement-breakpoint
DROP INDEX "locations_company_order_idx";--> statement-breakpoint
DROP INDEX "customers_company_order_idx";--> statement-breakpoint
DROP INDEX "job_photos_job_order_idx";--> statement-breakpoint
DROP INDEX "jobs_company_order_idx";--> statement-breakpoint
DROP INDEX "jobs_company_status_idx";--> statement-breakpoint
DROP INDEX "jobs_company_customer_idx";--> statement-breakpoint
DROP INDEX "jobs_company_location_idx";--> statement-breakpoint
DROP INDEX "jobs_company_assignee_idx";--> statement-breakpoint
DROP INDEX "estimates_company_order_idx";--> statement-breakpoint
DROP INDEX "estimates_company_status_idx";--> statement-breakpoint
DROP INDEX "estimates_company_customer_idx";--> statement-breakpoint
DROP INDEX "estimates_company_job_idx";--> statement-breakpoint
DROP INDEX "templates_company_order_idx";--> statement-breakpoint
DROP INDEX "invoices_company_order_idx";--> statement-breakpoint
DROP INDEX "invoices_company_status_idx";--> statement-breakpoint
DROP INDEX "invoices_company_customer_idx";--> statement-breakpoint
DROP INDEX "invoices_company_job_idx";--> statement-breakpoint
DROP INDEX "payments_company_order_idx";--> statement-breakpoint
DROP INDEX "payments_company_invoice_idx";--> statement-breakpoint
DROP INDEX "payments_company_customer_idx";--> statement-breakpoint
CREATE INDEX "users_company_order_idx" ON "users" USING btree ("company_id","created_at" DESC NULLS FIRST,"id" DESC NULLS FIRST);--> statement-breakpoint
CREATE INDEX "locations_company_order_idx" ON "locations" USING btree ("company_id","created_at" DESC NULLS FIRST,"uuid" DESC NULLS FIRST);--> statement-breakpoint
CREATE INDEX "customers_company_order_idx" ON "customers" USING btree ("company_id","created_at" DESC NULLS FIRST,"uuid" DESC NULLS FIRST);--> statement-breakpoint
CREATE INDEX "job_photos_job_order_idx" ON "job_photos" USING btree ("company_id","job_uuid","created_at" DESC NULLS FIRST,"uuid" DESC NULLS FIRST);--> statement-breakpoint
CREATE INDEX "jobs_company_order_idx" ON "jobs" USING btree ("company_id","created_at" DESC NULLS FIRST,"uuid" DESC NULLS FIRST);--> statement-breakpoint
CREATE INDEX "jobs_company_status_idx" ON "jobs" USING btree ("company_id","status","created_at" DESC NULLS FIRST,"uuid" DESC NULLS FIRST);--> statement-breakpoint
CREATE INDEX "jobs_company_customer_idx" ON "jobs" USING btree ("company_id","customer_uuid","created_at" DESC NULLS FIRST);--> statement-breakpoint
CREATE INDEX "jobs_company_location_idx" ON "jobs" USING btree ("company_id","location_uuid","created_at" DESC NULLS FIRST);--> statement-breakpoint
CREATE INDEX "jobs_company_assignee_idx" ON "jobs" USING btree ("company_id","assigned_to_user_id","created_at" DESC NULLS FIRST);--> statement-breakpoint
CREATE INDEX "estimates_company_order_idx" ON "estimates" USING btree ("company_id","created_at" DESC NULLS FIRST,"uuid" DESC NULLS FIRST);--> statement-breakpoint
CREATE INDEX "estimates_company_status_idx" ON "estimates" USING btree ("company_id","status","created_at" DESC NULLS FIRST);--> statement-breakpoint
CREATE INDEX "estimates_company_customer_idx" ON "estimates" USING btree ("company_id","customer_uuid","created_at" DESC NULLS FIRST);--> statement-breakpoint
CREATE INDEX "estimates_company_job_idx" ON "estimates" USING btree ("company_id","job_uuid","created_at" DESC NULLS FIRST);--> statement-breakpoint
CREATE INDEX "templates_company_order_idx" ON "templates" USING btree ("company_id","created_at" DESC NULLS FIRST,"uuid" DESC NULLS FIRST);--> statement-breakpoint
CREATE INDEX "invoices_company_order_idx" ON "invoices" USING btree ("company_id","created_at" DESC NULLS FIRST,"uuid" DESC NULLS FIRST);--> statement-breakpoint
CREATE INDEX "invoices_company_status_idx" ON "invoices" USING btree ("company_id","status","created_at" DESC NULLS FIRST);--> statement-breakpoint
CREATE INDEX "invoices_company_customer_idx" ON "invoices" USING btree ("company_id","customer_uuid","created_at" DESC NULLS FIRST);--> statement-breakpoint
CREATE INDEX "invoices_company_job_idx" ON "invoices" USING btree ("company_id","job_uuid","created_at" DESC NULLS FIRST);--> statement-breakpoint
CREATE INDEX "payments_company_order_idx" ON "payments" USING btree ("company_id","created_at" DESC NULLS FIRST,"uuid" DESC NULLS FIRST);--> statement-breakpoint
CREATE INDEX "payments_company_invoice_idx" ON "payments" USING btree ("company_id","invoice_uuid","created_at" DESC NULLS FIRST);--> statement-breakpoint
CREATE INDEX "payments_company_customer_idx" ON "payments" USING btree ("company_id","customer_uuid","created_at" DESC NULLS FIRST);
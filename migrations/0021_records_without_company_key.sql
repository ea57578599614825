-- The tables of a company's records and their events no longer reference companies row by row. Their
-- company_id always comes from the authenticated key (companies are never deleted), and each such key checked
-- a row lock on the one companies row: every create of a company wrote that lock to the log, and concurrent
-- creates shared it through a multixact. References between records stay composite keys (company_id, uuid),
-- so a cross-company reference is still refused; the company's account tables (users, keys, counters,
-- webhook endpoints, usage) keep their key to companies. Measured in bench/README.md.
ALTER TABLE "locations" DROP CONSTRAINT "locations_company_id_companies_uuid_fk";
--> statement-breakpoint
ALTER TABLE "customers" DROP CONSTRAINT "customers_company_id_companies_uuid_fk";
--> statement-breakpoint
ALTER TABLE "jobs" DROP CONSTRAINT "jobs_company_id_companies_uuid_fk";
--> statement-breakpoint
ALTER TABLE "estimates" DROP CONSTRAINT "estimates_company_id_companies_uuid_fk";
--> statement-breakpoint
ALTER TABLE "templates" DROP CONSTRAINT "templates_company_id_companies_uuid_fk";
--> statement-breakpoint
ALTER TABLE "invoices" DROP CONSTRAINT "invoices_company_id_companies_uuid_fk";
--> statement-breakpoint
ALTER TABLE "payments" DROP CONSTRAINT "payments_company_id_companies_uuid_fk";
--> statement-breakpoint
ALTER TABLE "events" DROP CONSTRAINT "events_company_id_companies_uuid_fk";
--> statement-breakpoint
ALTER TABLE "time_off" DROP CONSTRAINT "time_off_company_id_companies_uuid_fk";
--> statement-breakpoint
ALTER TABLE "visits" DROP CONSTRAINT "visits_company_id_companies_uuid_fk";

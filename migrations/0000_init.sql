CREATE EXTENSION IF NOT EXISTS pg_trgm;--> statement-breakpoint
CREATE TABLE "api_keys" (
	"id" uuid PRIMARY KEY NOT NULL,
	"company_id" uuid NOT NULL,
	"user_id" uuid NOT NULL,
	"key_prefix" text NOT NULL,
	"key_hash" text NOT NULL,
	"allowed_ips" text[] DEFAULT ARRAY[]::text[] NOT NULL,
	"revoked_at" timestamp (3) with time zone,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "companies" (
	"uuid" uuid PRIMARY KEY NOT NULL,
	"name" text NOT NULL,
	"email" text NOT NULL,
	"phone" text,
	"address_line_1" text,
	"address_line_2" text,
	"city" text,
	"state" text,
	"postal_code" text,
	"country" text,
	"addons" text[] DEFAULT ARRAY['photos','numbering']::text[] NOT NULL,
	"monthly_request_limit" bigint,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "usage_counters" (
	"company_id" uuid NOT NULL,
	"period" text NOT NULL,
	"instance_id" uuid NOT NULL,
	"request_count" integer DEFAULT 0 NOT NULL,
	"updated_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "usage_counters_company_id_period_instance_id_pk" PRIMARY KEY("company_id","period","instance_id")
);
--> statement-breakpoint
CREATE TABLE "users" (
	"company_id" uuid NOT NULL,
	"id" uuid NOT NULL,
	"first_name" text NOT NULL,
	"last_name" text NOT NULL,
	"email" text,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"deleted_at" timestamp (3) with time zone,
	CONSTRAINT "users_company_id_id_pk" PRIMARY KEY("company_id","id")
);
--> statement-breakpoint
CREATE TABLE "locations" (
	"company_id" uuid NOT NULL,
	"uuid" uuid NOT NULL,
	"name" text NOT NULL,
	"location_code" text,
	"address1" text NOT NULL,
	"address2" text,
	"city" text NOT NULL,
	"state" text NOT NULL,
	"zip" text NOT NULL,
	"phone" text,
	"timezone" text DEFAULT 'America/New_York' NOT NULL,
	"business_hours" jsonb,
	"default_tax_rules" jsonb,
	"service_types_offered" jsonb,
	"default_pricing_set_uuid" uuid,
	"is_primary" boolean DEFAULT false NOT NULL,
	"is_active" boolean DEFAULT true NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"deleted_at" timestamp (3) with time zone,
	CONSTRAINT "locations_company_id_uuid_pk" PRIMARY KEY("company_id","uuid")
);
--> statement-breakpoint
CREATE TABLE "customers" (
	"company_id" uuid NOT NULL,
	"uuid" uuid NOT NULL,
	"first_name" text NOT NULL,
	"last_name" text NOT NULL,
	"company_name" text,
	"email" text,
	"phone" text,
	"customer_type" text DEFAULT 'Residential' NOT NULL,
	"is_vip" boolean DEFAULT false NOT NULL,
	"physical_address1" text,
	"physical_address2" text,
	"physical_city" text,
	"physical_state" text,
	"physical_zip" text,
	"billing_address1" text,
	"billing_address2" text,
	"billing_city" text,
	"billing_state" text,
	"billing_zip" text,
	"primary_service_location_uuid" uuid,
	"notes" text,
	"internal_flags" jsonb,
	"on_my_way_notify_via" text,
	"search_text" text GENERATED ALWAYS AS (lower(coalesce(first_name || ' ' || last_name, '') || chr(31) || coalesce(company_name, '') || chr(31) || coalesce(email, '') || chr(31) || coalesce(phone, '') || chr(31) || coalesce(uuid::text, ''))) STORED,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"deleted_at" timestamp (3) with time zone,
	CONSTRAINT "customers_company_id_uuid_pk" PRIMARY KEY("company_id","uuid")
);
--> statement-breakpoint
CREATE TABLE "job_photos" (
	"company_id" uuid NOT NULL,
	"uuid" uuid NOT NULL,
	"job_uuid" uuid NOT NULL,
	"user_id" uuid NOT NULL,
	"storage_key" text NOT NULL,
	"photo_type" text NOT NULL,
	"file_name" text,
	"file_size" bigint,
	"mime_type" text,
	"taken_at" timestamp (3) with time zone,
	"customer_email_sent" boolean DEFAULT false NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"deleted_at" timestamp (3) with time zone,
	CONSTRAINT "job_photos_company_id_uuid_pk" PRIMARY KEY("company_id","uuid")
);
--> statement-breakpoint
CREATE TABLE "jobs" (
	"company_id" uuid NOT NULL,
	"uuid" uuid NOT NULL,
	"job_number" text,
	"customer_uuid" uuid NOT NULL,
	"location_uuid" uuid,
	"assigned_to_user_id" uuid,
	"title" text NOT NULL,
	"description" text,
	"status" text DEFAULT 'New' NOT NULL,
	"priority" text DEFAULT 'Normal' NOT NULL,
	"is_urgent" boolean DEFAULT false NOT NULL,
	"is_emergency" boolean DEFAULT false NOT NULL,
	"service_address1" text,
	"service_address2" text,
	"service_city" text,
	"service_state" text,
	"service_zip" text,
	"estimated_amount" numeric(12, 2),
	"actual_amount" numeric(12, 2),
	"scheduled_date" date,
	"scheduled_time_start" text,
	"scheduled_time_end" text,
	"started_at" timestamp (3) with time zone,
	"completed_at" timestamp (3) with time zone,
	"invoiced_at" timestamp (3) with time zone,
	"paid_at" timestamp (3) with time zone,
	"internal_notes" text,
	"customer_notes" text,
	"search_text" text GENERATED ALWAYS AS (lower(coalesce(title, '') || chr(31) || coalesce(description, '') || chr(31) || coalesce(job_number, ''))) STORED,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"deleted_at" timestamp (3) with time zone,
	CONSTRAINT "jobs_company_id_uuid_pk" PRIMARY KEY("company_id","uuid")
);
--> statement-breakpoint
CREATE TABLE "estimates" (
	"company_id" uuid NOT NULL,
	"uuid" uuid NOT NULL,
	"estimate_number" text,
	"estimate_seq" bigint,
	"customer_uuid" uuid NOT NULL,
	"job_uuid" uuid,
	"template_uuid" uuid NOT NULL,
	"location_uuid" uuid,
	"created_by_user_id" uuid NOT NULL,
	"status" text DEFAULT 'Pending' NOT NULL,
	"template_name" text NOT NULL,
	"pricing_type" text NOT NULL,
	"selected_tier" text,
	"base_amount" numeric(12, 2) NOT NULL,
	"addons_amount" numeric(12, 2) NOT NULL,
	"tax_amount" numeric(12, 2) NOT NULL,
	"total_amount" numeric(12, 2) NOT NULL,
	"quantity" numeric(12, 3) DEFAULT '1' NOT NULL,
	"selected_addons" jsonb,
	"adjustments" jsonb,
	"service_description" text,
	"internal_notes" text,
	"customer_notes" text,
	"response_notes" text,
	"expires_at" timestamp (3) with time zone,
	"responded_at" timestamp (3) with time zone,
	"search_text" text GENERATED ALWAYS AS (lower(coalesce(estimate_number, '') || chr(31) || coalesce(template_name, '') || chr(31) || coalesce(service_description, ''))) STORED,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"deleted_at" timestamp (3) with time zone,
	CONSTRAINT "estimates_company_id_uuid_pk" PRIMARY KEY("company_id","uuid")
);
--> statement-breakpoint
CREATE TABLE "templates" (
	"company_id" uuid NOT NULL,
	"uuid" uuid NOT NULL,
	"name" text NOT NULL,
	"description" text,
	"pricing_type" text NOT NULL,
	"base_price" numeric(12, 2),
	"tiers" jsonb,
	"addons" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"tax_rate" numeric(9, 4) DEFAULT '0' NOT NULL,
	"is_active" boolean DEFAULT true NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"deleted_at" timestamp (3) with time zone,
	CONSTRAINT "templates_company_id_uuid_pk" PRIMARY KEY("company_id","uuid")
);
--> statement-breakpoint
CREATE TABLE "invoices" (
	"company_id" uuid NOT NULL,
	"uuid" uuid NOT NULL,
	"invoice_number" text,
	"invoice_seq" bigint,
	"customer_uuid" uuid NOT NULL,
	"job_uuid" uuid,
	"estimate_uuid" uuid,
	"location_uuid" uuid,
	"created_by_user_id" uuid NOT NULL,
	"invoice_type" text DEFAULT 'Full' NOT NULL,
	"progress_percentage" numeric(9, 4),
	"issue_date" date NOT NULL,
	"due_date" date NOT NULL,
	"subtotal" numeric(12, 2) NOT NULL,
	"tax_amount" numeric(12, 2) NOT NULL,
	"discount_amount" numeric(12, 2) DEFAULT '0' NOT NULL,
	"total_amount" numeric(12, 2) NOT NULL,
	"paid_amount" numeric(12, 2) DEFAULT '0' NOT NULL,
	"balance_amount" numeric(12, 2) NOT NULL,
	"line_items" jsonb,
	"notes" text,
	"terms" text,
	"internal_notes" text,
	"status" text DEFAULT 'Pending' NOT NULL,
	"search_text" text GENERATED ALWAYS AS (lower(coalesce(invoice_number, ''))) STORED,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"deleted_at" timestamp (3) with time zone,
	CONSTRAINT "invoices_company_id_uuid_pk" PRIMARY KEY("company_id","uuid")
);
--> statement-breakpoint
CREATE TABLE "payments" (
	"company_id" uuid NOT NULL,
	"uuid" uuid NOT NULL,
	"payment_number" text,
	"payment_seq" bigint,
	"invoice_uuid" uuid NOT NULL,
	"customer_uuid" uuid NOT NULL,
	"payment_type" text NOT NULL,
	"payment_method" text,
	"amount" numeric(12, 2) NOT NULL,
	"processing_fee" numeric(12, 2) DEFAULT '0' NOT NULL,
	"net_amount" numeric(12, 2) NOT NULL,
	"payment_date" date NOT NULL,
	"transaction_id" text,
	"reference_number" text,
	"authorization_code" text,
	"payment_details" jsonb,
	"notes" text,
	"status" text DEFAULT 'Completed' NOT NULL,
	"processed_at" timestamp (3) with time zone,
	"created_by_user_id" uuid NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"deleted_at" timestamp (3) with time zone,
	CONSTRAINT "payments_company_id_uuid_pk" PRIMARY KEY("company_id","uuid")
);
--> statement-breakpoint
CREATE TABLE "numbering_counters" (
	"company_id" uuid NOT NULL,
	"kind" text NOT NULL,
	"prefix" text NOT NULL,
	"padding" integer DEFAULT 4 NOT NULL,
	"next_number" bigint DEFAULT 1 NOT NULL,
	"override_next_number" bigint,
	"updated_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "numbering_counters_company_id_kind_pk" PRIMARY KEY("company_id","kind")
);
--> statement-breakpoint
ALTER TABLE "api_keys" ADD CONSTRAINT "api_keys_company_id_user_id_users_company_id_id_fk" FOREIGN KEY ("company_id","user_id") REFERENCES "public"."users"("company_id","id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "usage_counters" ADD CONSTRAINT "usage_counters_company_id_companies_uuid_fk" FOREIGN KEY ("company_id") REFERENCES "public"."companies"("uuid") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "users" ADD CONSTRAINT "users_company_id_companies_uuid_fk" FOREIGN KEY ("company_id") REFERENCES "public"."companies"("uuid") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "locations" ADD CONSTRAINT "locations_company_id_companies_uuid_fk" FOREIGN KEY ("company_id") REFERENCES "public"."companies"("uuid") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "customers" ADD CONSTRAINT "customers_company_id_companies_uuid_fk" FOREIGN KEY ("company_id") REFERENCES "public"."companies"("uuid") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "customers" ADD CONSTRAINT "customers_company_id_primary_service_location_uuid_locations_company_id_uuid_fk" FOREIGN KEY ("company_id","primary_service_location_uuid") REFERENCES "public"."locations"("company_id","uuid") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "job_photos" ADD CONSTRAINT "job_photos_company_id_job_uuid_jobs_company_id_uuid_fk" FOREIGN KEY ("company_id","job_uuid") REFERENCES "public"."jobs"("company_id","uuid") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "job_photos" ADD CONSTRAINT "job_photos_company_id_user_id_users_company_id_id_fk" FOREIGN KEY ("company_id","user_id") REFERENCES "public"."users"("company_id","id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "jobs" ADD CONSTRAINT "jobs_company_id_companies_uuid_fk" FOREIGN KEY ("company_id") REFERENCES "public"."companies"("uuid") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "jobs" ADD CONSTRAINT "jobs_company_id_customer_uuid_customers_company_id_uuid_fk" FOREIGN KEY ("company_id","customer_uuid") REFERENCES "public"."customers"("company_id","uuid") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "jobs" ADD CONSTRAINT "jobs_company_id_location_uuid_locations_company_id_uuid_fk" FOREIGN KEY ("company_id","location_uuid") REFERENCES "public"."locations"("company_id","uuid") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "jobs" ADD CONSTRAINT "jobs_company_id_assigned_to_user_id_users_company_id_id_fk" FOREIGN KEY ("company_id","assigned_to_user_id") REFERENCES "public"."users"("company_id","id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "estimates" ADD CONSTRAINT "estimates_company_id_companies_uuid_fk" FOREIGN KEY ("company_id") REFERENCES "public"."companies"("uuid") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "estimates" ADD CONSTRAINT "estimates_company_id_customer_uuid_customers_company_id_uuid_fk" FOREIGN KEY ("company_id","customer_uuid") REFERENCES "public"."customers"("company_id","uuid") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "estimates" ADD CONSTRAINT "estimates_company_id_job_uuid_jobs_company_id_uuid_fk" FOREIGN KEY ("company_id","job_uuid") REFERENCES "public"."jobs"("company_id","uuid") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "estimates" ADD CONSTRAINT "estimates_company_id_template_uuid_templates_company_id_uuid_fk" FOREIGN KEY ("company_id","template_uuid") REFERENCES "public"."templates"("company_id","uuid") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "estimates" ADD CONSTRAINT "estimates_company_id_location_uuid_locations_company_id_uuid_fk" FOREIGN KEY ("company_id","location_uuid") REFERENCES "public"."locations"("company_id","uuid") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "estimates" ADD CONSTRAINT "estimates_company_id_created_by_user_id_users_company_id_id_fk" FOREIGN KEY ("company_id","created_by_user_id") REFERENCES "public"."users"("company_id","id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "templates" ADD CONSTRAINT "templates_company_id_companies_uuid_fk" FOREIGN KEY ("company_id") REFERENCES "public"."companies"("uuid") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "invoices" ADD CONSTRAINT "invoices_company_id_companies_uuid_fk" FOREIGN KEY ("company_id") REFERENCES "public"."companies"("uuid") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "invoices" ADD CONSTRAINT "invoices_company_id_customer_uuid_customers_company_id_uuid_fk" FOREIGN KEY ("company_id","customer_uuid") REFERENCES "public"."customers"("company_id","uuid") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "invoices" ADD CONSTRAINT "invoices_company_id_job_uuid_jobs_company_id_uuid_fk" FOREIGN KEY ("company_id","job_uuid") REFERENCES "public"."jobs"("company_id","uuid") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "invoices" ADD CONSTRAINT "invoices_company_id_estimate_uuid_estimates_company_id_uuid_fk" FOREIGN KEY ("company_id","estimate_uuid") REFERENCES "public"."estimates"("company_id","uuid") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "invoices" ADD CONSTRAINT "invoices_company_id_location_uuid_locations_company_id_uuid_fk" FOREIGN KEY ("company_id","location_uuid") REFERENCES "public"."locations"("company_id","uuid") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "invoices" ADD CONSTRAINT "invoices_company_id_created_by_user_id_users_company_id_id_fk" FOREIGN KEY ("company_id","created_by_user_id") REFERENCES "public"."users"("company_id","id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "payments" ADD CONSTRAINT "payments_company_id_companies_uuid_fk" FOREIGN KEY ("company_id") REFERENCES "public"."companies"("uuid") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "payments" ADD CONSTRAINT "payments_company_id_invoice_uuid_invoices_company_id_uuid_fk" FOREIGN KEY ("company_id","invoice_uuid") REFERENCES "public"."invoices"("company_id","uuid") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "payments" ADD CONSTRAINT "payments_company_id_customer_uuid_customers_company_id_uuid_fk" FOREIGN KEY ("company_id","customer_uuid") REFERENCES "public"."customers"("company_id","uuid") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "payments" ADD CONSTRAINT "payments_company_id_created_by_user_id_users_company_id_id_fk" FOREIGN KEY ("company_id","created_by_user_id") REFERENCES "public"."users"("company_id","id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "numbering_counters" ADD CONSTRAINT "numbering_counters_company_id_companies_uuid_fk" FOREIGN KEY ("company_id") REFERENCES "public"."companies"("uuid") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "api_keys_key_prefix_idx" ON "api_keys" USING btree ("key_prefix");--> statement-breakpoint
CREATE UNIQUE INDEX "api_keys_key_hash_idx" ON "api_keys" USING btree ("key_hash");--> statement-breakpoint
CREATE INDEX "users_company_order_idx" ON "users" USING btree ("company_id","created_at" DESC NULLS LAST,"id" DESC NULLS LAST);--> statement-breakpoint
CREATE INDEX "locations_company_order_idx" ON "locations" USING btree ("company_id","created_at" DESC NULLS LAST,"uuid" DESC NULLS LAST);--> statement-breakpoint
CREATE UNIQUE INDEX "locations_one_primary_idx" ON "locations" USING btree ("company_id") WHERE "locations"."is_primary" and "locations"."deleted_at" is null;--> statement-breakpoint
CREATE INDEX "customers_company_order_idx" ON "customers" USING btree ("company_id","created_at" DESC NULLS LAST,"uuid" DESC NULLS LAST);--> statement-breakpoint
CREATE INDEX "customers_search_idx" ON "customers" USING gin ("search_text" gin_trgm_ops);--> statement-breakpoint
CREATE INDEX "job_photos_job_order_idx" ON "job_photos" USING btree ("company_id","job_uuid","created_at" DESC NULLS LAST,"uuid" DESC NULLS LAST);--> statement-breakpoint
CREATE INDEX "jobs_company_order_idx" ON "jobs" USING btree ("company_id","created_at" DESC NULLS LAST,"uuid" DESC NULLS LAST);--> statement-breakpoint
CREATE INDEX "jobs_company_status_idx" ON "jobs" USING btree ("company_id","status","created_at" DESC NULLS LAST,"uuid" DESC NULLS LAST);--> statement-breakpoint
CREATE INDEX "jobs_company_customer_idx" ON "jobs" USING btree ("company_id","customer_uuid","created_at" DESC NULLS LAST);--> statement-breakpoint
CREATE INDEX "jobs_company_location_idx" ON "jobs" USING btree ("company_id","location_uuid","created_at" DESC NULLS LAST);--> statement-breakpoint
CREATE INDEX "jobs_company_assignee_idx" ON "jobs" USING btree ("company_id","assigned_to_user_id","created_at" DESC NULLS LAST);--> statement-breakpoint
CREATE INDEX "jobs_search_idx" ON "jobs" USING gin ("search_text" gin_trgm_ops);--> statement-breakpoint
CREATE UNIQUE INDEX "estimates_number_idx" ON "estimates" USING btree ("company_id","estimate_seq");--> statement-breakpoint
CREATE INDEX "estimates_company_order_idx" ON "estimates" USING btree ("company_id","created_at" DESC NULLS LAST,"uuid" DESC NULLS LAST);--> statement-breakpoint
CREATE INDEX "estimates_company_status_idx" ON "estimates" USING btree ("company_id","status","created_at" DESC NULLS LAST);--> statement-breakpoint
CREATE INDEX "estimates_company_customer_idx" ON "estimates" USING btree ("company_id","customer_uuid","created_at" DESC NULLS LAST);--> statement-breakpoint
CREATE INDEX "estimates_company_job_idx" ON "estimates" USING btree ("company_id","job_uuid","created_at" DESC NULLS LAST);--> statement-breakpoint
CREATE INDEX "estimates_search_idx" ON "estimates" USING gin ("search_text" gin_trgm_ops);--> statement-breakpoint
CREATE INDEX "templates_company_order_idx" ON "templates" USING btree ("company_id","created_at" DESC NULLS LAST,"uuid" DESC NULLS LAST);--> statement-breakpoint
CREATE UNIQUE INDEX "invoices_number_idx" ON "invoices" USING btree ("company_id","invoice_seq");--> statement-breakpoint
CREATE INDEX "invoices_company_order_idx" ON "invoices" USING btree ("company_id","created_at" DESC NULLS LAST,"uuid" DESC NULLS LAST);--> statement-breakpoint
CREATE INDEX "invoices_company_status_idx" ON "invoices" USING btree ("company_id","status","created_at" DESC NULLS LAST);--> statement-breakpoint
CREATE INDEX "invoices_company_customer_idx" ON "invoices" USING btree ("company_id","customer_uuid","created_at" DESC NULLS LAST);--> statement-breakpoint
CREATE INDEX "invoices_company_job_idx" ON "invoices" USING btree ("company_id","job_uuid","created_at" DESC NULLS LAST);--> statement-breakpoint
CREATE INDEX "invoices_search_idx" ON "invoices" USING gin ("search_text" gin_trgm_ops);--> statement-breakpoint
CREATE UNIQUE INDEX "payments_number_idx" ON "payments" USING btree ("company_id","payment_seq");--> statement-breakpoint
CREATE INDEX "payments_company_order_idx" ON "payments" USING btree ("company_id","created_at" DESC NULLS LAST,"uuid" DESC NULLS LAST);--> statement-breakpoint
CREATE INDEX "payments_company_invoice_idx" ON "payments" USING btree ("company_id","invoice_uuid","created_at" DESC NULLS LAST);--> statement-breakpoint
CREATE INDEX "payments_company_customer_idx" ON "payments" USING btree ("company_id","customer_uuid","created_at" DESC NULLS LAST);
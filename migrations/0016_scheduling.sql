CREATE EXTENSION IF NOT EXISTS btree_gist;--> statement-breakpoint
CREATE TABLE "calendar_links" (
	"company_id" uuid NOT NULL,
	"uuid" uuid NOT NULL,
	"user_id" uuid NOT NULL,
	"token_hash" text NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "calendar_links_company_id_uuid_pk" PRIMARY KEY("company_id","uuid")
);
--> statement-breakpoint
CREATE TABLE "schedule_holds" (
	"company_id" uuid NOT NULL,
	"uuid" uuid NOT NULL,
	"user_id" uuid NOT NULL,
	"starts_at" timestamp (3) with time zone NOT NULL,
	"ends_at" timestamp (3) with time zone NOT NULL,
	"visit_uuid" uuid,
	"time_off_uuid" uuid,
	CONSTRAINT "schedule_holds_company_id_uuid_pk" PRIMARY KEY("company_id","uuid"),
	CONSTRAINT "schedule_holds_one_owner_check" CHECK (("schedule_holds"."visit_uuid" is null) <> ("schedule_holds"."time_off_uuid" is null)),
	CONSTRAINT "schedule_holds_interval_check" CHECK ("schedule_holds"."ends_at" > "schedule_holds"."starts_at")
);
--> statement-breakpoint
CREATE TABLE "time_off" (
	"company_id" uuid NOT NULL,
	"uuid" uuid NOT NULL,
	"user_id" uuid NOT NULL,
	"starts_at" timestamp (3) with time zone NOT NULL,
	"ends_at" timestamp (3) with time zone NOT NULL,
	"reason" text,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"deleted_at" timestamp (3) with time zone,
	CONSTRAINT "time_off_company_id_uuid_pk" PRIMARY KEY("company_id","uuid"),
	CONSTRAINT "time_off_interval_check" CHECK ("time_off"."ends_at" > "time_off"."starts_at")
);
--> statement-breakpoint
CREATE TABLE "visits" (
	"company_id" uuid NOT NULL,
	"uuid" uuid NOT NULL,
	"job_uuid" uuid NOT NULL,
	"title" text,
	"instructions" text,
	"time_zone" text NOT NULL,
	"starts_at" timestamp (3) with time zone NOT NULL,
	"ends_at" timestamp (3) with time zone NOT NULL,
	"arrival_window_minutes" integer,
	"assigned_user_ids" uuid[] DEFAULT '{}'::uuid[] NOT NULL,
	"allow_overlap" boolean DEFAULT false NOT NULL,
	"status" text DEFAULT 'Scheduled' NOT NULL,
	"dispatched_at" timestamp (3) with time zone,
	"en_route_at" timestamp (3) with time zone,
	"arrived_at" timestamp (3) with time zone,
	"completed_at" timestamp (3) with time zone,
	"cancelled_at" timestamp (3) with time zone,
	"sequence" integer DEFAULT 0 NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"deleted_at" timestamp (3) with time zone,
	CONSTRAINT "visits_company_id_uuid_pk" PRIMARY KEY("company_id","uuid"),
	CONSTRAINT "visits_interval_check" CHECK ("visits"."ends_at" > "visits"."starts_at")
);
--> statement-breakpoint
ALTER TABLE "calendar_links" ADD CONSTRAINT "calendar_links_company_id_user_id_users_company_id_id_fk" FOREIGN KEY ("company_id","user_id") REFERENCES "public"."users"("company_id","id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "schedule_holds" ADD CONSTRAINT "schedule_holds_company_id_user_id_users_company_id_id_fk" FOREIGN KEY ("company_id","user_id") REFERENCES "public"."users"("company_id","id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "schedule_holds" ADD CONSTRAINT "schedule_holds_company_id_visit_uuid_visits_company_id_uuid_fk" FOREIGN KEY ("company_id","visit_uuid") REFERENCES "public"."visits"("company_id","uuid") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "schedule_holds" ADD CONSTRAINT "schedule_holds_company_id_time_off_uuid_time_off_company_id_uuid_fk" FOREIGN KEY ("company_id","time_off_uuid") REFERENCES "public"."time_off"("company_id","uuid") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "time_off" ADD CONSTRAINT "time_off_company_id_companies_uuid_fk" FOREIGN KEY ("company_id") REFERENCES "public"."companies"("uuid") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "time_off" ADD CONSTRAINT "time_off_company_id_user_id_users_company_id_id_fk" FOREIGN KEY ("company_id","user_id") REFERENCES "public"."users"("company_id","id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "visits" ADD CONSTRAINT "visits_company_id_companies_uuid_fk" FOREIGN KEY ("company_id") REFERENCES "public"."companies"("uuid") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "visits" ADD CONSTRAINT "visits_company_id_job_uuid_jobs_company_id_uuid_fk" FOREIGN KEY ("company_id","job_uuid") REFERENCES "public"."jobs"("company_id","uuid") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "calendar_links_token_idx" ON "calendar_links" USING btree ("token_hash");--> statement-breakpoint
CREATE INDEX "calendar_links_user_idx" ON "calendar_links" USING btree ("company_id","user_id");--> statement-breakpoint
CREATE INDEX "schedule_holds_visit_idx" ON "schedule_holds" USING btree ("company_id","visit_uuid") WHERE "schedule_holds"."visit_uuid" is not null;--> statement-breakpoint
CREATE INDEX "schedule_holds_time_off_idx" ON "schedule_holds" USING btree ("company_id","time_off_uuid") WHERE "schedule_holds"."time_off_uuid" is not null;--> statement-breakpoint
CREATE INDEX "time_off_company_order_idx" ON "time_off" USING btree ("company_id","created_at" DESC NULLS FIRST,"uuid" DESC NULLS FIRST);--> statement-breakpoint
CREATE INDEX "time_off_company_sync_idx" ON "time_off" USING btree ("company_id","updated_at","uuid");--> statement-breakpoint
CREATE INDEX "time_off_company_user_idx" ON "time_off" USING btree ("company_id","user_id","created_at" DESC NULLS FIRST,"uuid" DESC NULLS FIRST) WHERE "time_off"."deleted_at" is null;--> statement-breakpoint
CREATE INDEX "visits_company_order_idx" ON "visits" USING btree ("company_id","created_at" DESC NULLS FIRST,"uuid" DESC NULLS FIRST);--> statement-breakpoint
CREATE INDEX "visits_company_sync_idx" ON "visits" USING btree ("company_id","updated_at","uuid");--> statement-breakpoint
CREATE INDEX "visits_company_job_idx" ON "visits" USING btree ("company_id","job_uuid","created_at" DESC NULLS FIRST,"uuid" DESC NULLS FIRST) WHERE "visits"."deleted_at" is null;--> statement-breakpoint
CREATE INDEX "visits_company_starts_idx" ON "visits" USING btree ("company_id","starts_at","uuid") WHERE "visits"."deleted_at" is null;--> statement-breakpoint
CREATE INDEX "visits_company_assignees_idx" ON "visits" USING gin ("company_id","assigned_user_ids") WHERE "visits"."deleted_at" is null;--> statement-breakpoint
-- No user is held twice at one moment (DECISIONS §13): half-open ranges, so back-to-back holds do not overlap.
-- drizzle-kit does not model exclusion constraints; this one lives here only.
ALTER TABLE "schedule_holds" ADD CONSTRAINT "schedule_holds_no_overlap" EXCLUDE USING gist ("company_id" WITH =, "user_id" WITH =, tstzrange("starts_at", "ends_at") WITH &&);

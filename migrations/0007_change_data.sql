CREATE TABLE "events" (
	"company_id" uuid NOT NULL,
	"uuid" uuid NOT NULL,
	"seq" bigint GENERATED ALWAYS AS IDENTITY (sequence name "events_seq_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"txid" "xid8" DEFAULT pg_current_xact_id() NOT NULL,
	"type" text NOT NULL,
	"object_type" text NOT NULL,
	"object_uuid" uuid NOT NULL,
	"data" jsonb NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "events_company_id_uuid_pk" PRIMARY KEY("company_id","uuid")
);
--> statement-breakpoint
CREATE TABLE "webhook_deliveries" (
	"company_id" uuid NOT NULL,
	"uuid" uuid NOT NULL,
	"endpoint_uuid" uuid NOT NULL,
	"event_uuid" uuid NOT NULL,
	"event_type" text NOT NULL,
	"status" text DEFAULT 'pending' NOT NULL,
	"attempts" integer DEFAULT 0 NOT NULL,
	"last_attempt_at" timestamp (3) with time zone,
	"next_attempt_at" timestamp (3) with time zone DEFAULT now(),
	"lease_expires_at" timestamp (3) with time zone,
	"last_response_status" integer,
	"last_error" text,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "webhook_deliveries_company_id_uuid_pk" PRIMARY KEY("company_id","uuid")
);
--> statement-breakpoint
CREATE TABLE "webhook_endpoints" (
	"company_id" uuid NOT NULL,
	"uuid" uuid NOT NULL,
	"url" text NOT NULL,
	"description" text,
	"events" text[] NOT NULL,
	"enabled" boolean DEFAULT true NOT NULL,
	"secret" text NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"deleted_at" timestamp (3) with time zone,
	CONSTRAINT "webhook_endpoints_company_id_uuid_pk" PRIMARY KEY("company_id","uuid")
);
--> statement-breakpoint
ALTER TABLE "events" ADD CONSTRAINT "events_company_id_companies_uuid_fk" FOREIGN KEY ("company_id") REFERENCES "public"."companies"("uuid") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "webhook_deliveries" ADD CONSTRAINT "webhook_deliveries_company_id_endpoint_uuid_webhook_endpoints_company_id_uuid_fk" FOREIGN KEY ("company_id","endpoint_uuid") REFERENCES "public"."webhook_endpoints"("company_id","uuid") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "webhook_deliveries" ADD CONSTRAINT "webhook_deliveries_company_id_event_uuid_events_company_id_uuid_fk" FOREIGN KEY ("company_id","event_uuid") REFERENCES "public"."events"("company_id","uuid") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "webhook_endpoints" ADD CONSTRAINT "webhook_endpoints_company_id_companies_uuid_fk" FOREIGN KEY ("company_id") REFERENCES "public"."companies"("uuid") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "events_company_feed_idx" ON "events" USING btree ("company_id","txid","seq");--> statement-breakpoint
CREATE INDEX "events_company_object_idx" ON "events" USING btree ("company_id","object_uuid","txid","seq");--> statement-breakpoint
CREATE INDEX "events_created_at_idx" ON "events" USING btree ("created_at");--> statement-breakpoint
CREATE INDEX "webhook_deliveries_endpoint_order_idx" ON "webhook_deliveries" USING btree ("company_id","endpoint_uuid","created_at" DESC NULLS FIRST,"uuid" DESC NULLS FIRST);--> statement-breakpoint
CREATE INDEX "webhook_deliveries_due_idx" ON "webhook_deliveries" USING btree ("next_attempt_at") WHERE status = 'pending';--> statement-breakpoint
CREATE INDEX "webhook_endpoints_company_order_idx" ON "webhook_endpoints" USING btree ("company_id","created_at" DESC NULLS FIRST,"uuid" DESC NULLS FIRST);
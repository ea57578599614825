CREATE TABLE "api_key_rolled_secrets" (
	"key_hash" text PRIMARY KEY NOT NULL,
	"api_key_id" uuid NOT NULL,
	"key_prefix" text NOT NULL,
	"expires_at" timestamp (3) with time zone NOT NULL
);
--> statement-breakpoint
ALTER TABLE "api_keys" ADD COLUMN "name" text;--> statement-breakpoint
ALTER TABLE "api_keys" ADD COLUMN "mode" text DEFAULT 'live' NOT NULL;--> statement-breakpoint
ALTER TABLE "api_keys" ADD COLUMN "scopes" text[] DEFAULT ARRAY['*']::text[] NOT NULL;--> statement-breakpoint
ALTER TABLE "api_keys" ADD COLUMN "expires_at" timestamp (3) with time zone;--> statement-breakpoint
ALTER TABLE "companies" ADD COLUMN "sandbox_of" uuid;--> statement-breakpoint
ALTER TABLE "api_key_rolled_secrets" ADD CONSTRAINT "api_key_rolled_secrets_api_key_id_api_keys_id_fk" FOREIGN KEY ("api_key_id") REFERENCES "public"."api_keys"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "api_key_rolled_secrets_api_key_idx" ON "api_key_rolled_secrets" USING btree ("api_key_id");--> statement-breakpoint
ALTER TABLE "companies" ADD CONSTRAINT "companies_sandbox_of_companies_uuid_fk" FOREIGN KEY ("sandbox_of") REFERENCES "public"."companies"("uuid") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "api_keys_company_order_idx" ON "api_keys" USING btree ("company_id","created_at" DESC NULLS FIRST,"id" DESC NULLS FIRST);--> statement-breakpoint
CREATE UNIQUE INDEX "companies_sandbox_of_idx" ON "companies" USING btree ("sandbox_of");
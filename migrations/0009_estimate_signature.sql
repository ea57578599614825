ALTER TABLE "estimates" ADD COLUMN "signature_name" text;--> statement-breakpoint
ALTER TABLE "estimates" ADD COLUMN "signed_at" timestamp (3) with time zone;
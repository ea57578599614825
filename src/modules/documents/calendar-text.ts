import ical, { ICalEventStatus } from 'ical-generator';

/** A visit as a calendar event shows it: its times, its text and its job's service address. */
export interface CalendarVisit {
  uuid: string;
  title: string | null;
  instructions: string | null;
  startsAt: Date;
  endsAt: Date;
  status: string;
  sequence: number;
  createdAt: Date;
  updatedAt: Date;
  jobTitle: string;
  address1: string | null;
  address2: string | null;
  city: string | null;
  state: string | null;
  zip: string | null;
}

/** The service address of the job, on one line, or null when it has none. */
function addressOf(visit: CalendarVisit): string | null {
  const cityLine = [visit.city, [visit.state, visit.zip].filter(Boolean).join(' ')].filter(Boolean).join(', ');
  const parts = [visit.address1, visit.address2, cityLine].filter((part): part is string => Boolean(part));
  return parts.length > 0 ? parts.join(', ') : null;
}

/**
 * A technician's calendar as RFC 5545 text (ical-generator writes it): one VEVENT per visit, DTSTART and
 * DTEND the visit's instants (UTC), UID `<visit uuid>@<host>`, SUMMARY the visit's title or the job's,
 * LOCATION the job's service address, DESCRIPTION the instructions, SEQUENCE growing with each change,
 * STATUS CANCELLED for a cancelled visit. Nothing about the customer's email or phone.
 */
export interface CalendarInput {
  name: string;
  host: string;
  visits: readonly CalendarVisit[];
}

export function icalFeed(options: CalendarInput): string {
  const calendar = ical({ name: options.name, prodId: { company: 'field-service-crm', product: 'schedule', language: 'EN' } });
  for (const visit of options.visits) {
    calendar.createEvent({
      id: `${visit.uuid}@${options.host}`,
      start: visit.startsAt,
      end: visit.endsAt,
      stamp: visit.updatedAt,
      created: visit.createdAt,
      lastModified: visit.updatedAt,
      // An empty title is no title: the job's shows instead.
      summary: visit.title || visit.jobTitle,
      location: addressOf(visit),
      description: visit.instructions,
      sequence: visit.sequence,
      status: visit.status === 'Cancelled' ? ICalEventStatus.CANCELLED : ICalEventStatus.CONFIRMED,
    });
  }
  // RFC 5545 ends every content line with CRLF, the last one (END:VCALENDAR) included; the library leaves it off.
  const text = calendar.toString();
  return text.endsWith('\r\n') ? text : `${text}\r\n`;
}

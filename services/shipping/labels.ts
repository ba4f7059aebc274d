import type { Knex } from 'knex';
import { PDFDocument, StandardFonts } from 'pdf-lib';
import type { CarrierAccountService, OpenAccount } from './accounts';

/** Labels fetched at once: a carrier takes 4 calls at once from one account. */
const AT_ONCE = 4;
/** The merged file at most this big (500 labels of 100 kB): past it, labels are named missing rather than held. */
const MERGED_MAX_BYTES = 64 * 1024 * 1024;
/** One label at most this big: a carrier's A6 label is 20–100 kB. */
const LABEL_MAX_BYTES = 2 * 1024 * 1024;

export interface MergedLabels {
  /** null when no parcel of the list has a label. */
  pdf: Uint8Array | null;
  /** The references of the parcels without a label (the carrier gives none, or it could not be read). */
  missing: string[];
}

/**
 * Every label of the parcels, in the order of the list, merged into one PDF (pdf-lib): the carriers'
 * own label PDFs, fetched four at a time so the web process holds four carriers' files and the
 * merged one, never 500 files at once. A parcel whose carrier gives no label, or whose label is not a PDF,
 * is named in `missing`.
 */
export async function mergeLabels(knex: Knex, accounts: CarrierAccountService, workspaceId: string, parcelIds: readonly string[]): Promise<MergedLabels> {
  const rows = await knex('parcels')
    .where({ workspace_id: workspaceId, state: 'sent' })
    .whereIn('id', [...parcelIds])
    .select('id', 'account_id', 'reference', 'tracking', 'label_url');
  const byId = new Map(rows.map((row) => [row.id, row]));
  const opened = new Map<string, OpenAccount | null>();
  const merged = await PDFDocument.create();
  const missing: string[] = [];
  /** The labels' bytes taken into the merged file so far. */
  let held = 0;
  const fetchLabel = async (id: string): Promise<{ reference: string; pages: PDFDocument | null } | null> => {
    const parcel = byId.get(id);
    if (!parcel) return null;
    if (!opened.has(parcel.account_id)) opened.set(parcel.account_id, await accounts.open(workspaceId, parcel.account_id));
    const account = opened.get(parcel.account_id);
    if (account?.adapter.label) await accounts.pace(account);
    const label = account?.adapter.label
      ? await account.adapter
          .label(accounts.session(account.adapter, account.credentials, account.id), { tracking: parcel.tracking, labelUrl: parcel.label_url })
          .catch(() => null)
      : null;
    const fits = label && label.length <= LABEL_MAX_BYTES && held + label.length <= MERGED_MAX_BYTES;
    if (fits) held += label.length;
    const pages = fits ? await PDFDocument.load(label, { ignoreEncryption: true }).catch(() => null) : null;
    return { reference: parcel.reference, pages };
  };
  // A few labels fetched at once (the carriers' calls at once), merged in the list's order.
  for (let i = 0; i < parcelIds.length; i += AT_ONCE) {
    for (const got of await Promise.all(parcelIds.slice(i, i + AT_ONCE).map(fetchLabel))) {
      if (!got) continue;
      if (!got.pages) {
        missing.push(got.reference);
        continue;
      }
      for (const page of await merged.copyPages(got.pages, got.pages.getPageIndices())) merged.addPage(page);
    }
  }
  if (merged.getPageCount() > 0 && missing.length > 0) await listMissing(merged, missing);
  return { pdf: merged.getPageCount() > 0 ? await merged.save() : null, missing };
}

/**
 * A last page naming the parcels without a label, so the printed pile says what is not in it
 * (references in the PDF's standard font: anything it cannot draw becomes `?`).
 */
async function listMissing(merged: PDFDocument, missing: readonly string[]): Promise<void> {
  const font = await merged.embedFont(StandardFonts.Helvetica);
  const drawable = (text: string) => text.replace(/[^\x20-\x7e]/g, '?');
  let page = merged.addPage([283, 425]);
  let y = 395;
  page.drawText(drawable(`No label (${missing.length}):`), { x: 20, y, size: 12, font });
  for (const reference of missing) {
    y -= 16;
    if (y < 20) {
      page = merged.addPage([283, 425]);
      y = 395;
    }
    page.drawText(drawable(reference).slice(0, 40), { x: 20, y, size: 10, font });
  }
}

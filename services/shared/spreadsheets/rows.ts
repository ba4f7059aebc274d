/** One row of a sheet: its line (CSV) or row number (XLSX) as the shop's spreadsheet shows it, and its cells as text. */
export interface SheetRow {
  line: number;
  cells: string[];
}

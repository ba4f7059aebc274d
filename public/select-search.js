// A long select (a carrier's cities, views/shipping/shipment.ejs) gets a search field above it when
// this script runs: typing keeps the options whose text holds what was typed, case and accents
// aside. Without scripts the plain select works alone.
const fold = (text) =>
  text
    .normalize('NFD')
    .replace(/\p{M}/gu, '')
    .toLowerCase();
for (const select of document.querySelectorAll('select[data-searchable]')) {
  const search = document.createElement('input');
  search.type = 'search';
  search.className = 'select-search';
  search.setAttribute('aria-label', select.dataset.searchLabel || '');
  search.setAttribute('aria-controls', select.id);
  search.dir = 'auto';
  select.before(search);
  const options = [...select.options].slice(1);
  search.addEventListener('input', () => {
    const wanted = fold(search.value.trim());
    let first = null;
    for (const option of options) {
      const shown = wanted === '' || fold(option.text).includes(wanted);
      option.hidden = !shown;
      if (shown && !first) first = option;
    }
    if (wanted && first) select.value = first.value;
  });
}

// Copy buttons (views/partials/copy.ejs): hidden until this script runs, so a page without scripts
// shows no button that does nothing; the field's text stays selectable either way.
for (const button of document.querySelectorAll('button[data-copy]')) {
  const field = document.getElementById(button.dataset.copy);
  if (!field) continue;
  button.hidden = false;
  const label = button.firstChild.textContent;
  button.addEventListener('click', async () => {
    try {
      await navigator.clipboard.writeText(field.value ?? field.textContent);
    } catch {
      field.select?.();
      document.execCommand('copy');
    }
    button.firstChild.textContent = button.dataset.copied;
    setTimeout(() => {
      button.firstChild.textContent = label;
    }, 2000);
  });
}

// The fields of an admin-defined form (FieldDefinitionInline): a field whose "Step" or "More options" hold a
// value opens them, so a definition being edited shows everything it says. Django itself unfolds the ones with
// an error; empty ones stay folded.
'use strict';
document.addEventListener('DOMContentLoaded', () => {
  const rows = document.querySelectorAll('.mcpforms-fields .inline-related:not(.empty-form)');
  for (const details of [...rows].flatMap((row) => [...row.querySelectorAll('details')])) {
    const inputs = details.querySelectorAll('input, textarea, select');
    if ([...inputs].some((input) => (input.type === 'checkbox' ? input.checked : input.value !== ''))) {
      details.open = true;
    }
  }
  // A field that starts a step names the step in its heading, kept up to date as the title is typed, so
  // the steps read down the page without unfolding anything.
  for (const row of rows) {
    const input = row.querySelector('input[name$="-step"]');
    const heading = row.querySelector('h3');
    if (!input || !heading) continue;
    const title = document.createElement('span');
    title.className = 'mcpforms-step-title';
    const label = heading.querySelector('.inline_label');
    if (label) label.after(title);
    else heading.append(title);
    const show = () => {
      title.textContent = input.value.trim() ? `starts the step “${input.value.trim()}”` : '';
    };
    input.addEventListener('input', show);
    show();
  }
});

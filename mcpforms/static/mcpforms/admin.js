// The fields of an admin-defined form (FieldDefinitionInline): a field whose "More options" hold a value
// opens them, so a definition being edited shows everything it says. Django itself unfolds the ones with
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
});

  // One field's value, typed as the tool's inputSchema types it, from the field's inputs (an array of
  // elements). An empty input gives undefined, so that Django reports a required field as missing rather
  // than judging an empty string. Included by mcpforms/form.html, and by any page of yours that sends a
  // form's values to a tool.
  function mcpformsFieldValue(inputs, kind) {
    if (!inputs.length) { return undefined; }
    if (kind === "boolean") { return inputs[0].checked; }
    if (kind === "multiple") {
      var picked = [];
      inputs.forEach(function (input) {
        if (input.tagName === "SELECT") {
          Array.prototype.forEach.call(input.selectedOptions, function (option) { picked.push(option.value); });
        } else if (input.checked) { picked.push(input.value); }
      });
      return picked.length ? picked : undefined;
    }
    var chosen = inputs.filter(function (input) { return input.type !== "radio" || input.checked; })[0];
    var text = chosen ? chosen.value : "";
    if (text === "") { return undefined; }
    if (kind === "integer" && /^-?\d+$/.test(text.trim())) { return parseInt(text, 10); }
    if (kind === "number" && text.trim() !== "" && isFinite(Number(text))) { return Number(text); }
    return text;
  }

//! The suite's prompts, through the public prompt API.

use quire_tools::{Completes, Prompt, PromptArgument, PromptMessage, PromptOutput, PromptRegistry};

use crate::asking::{field, name_form};
use crate::media::{image, text_resource};

/// A prompt without arguments that always renders `messages`.
pub(crate) fn fixed_prompt(name: &str, description: &str, messages: Vec<PromptMessage>) -> Prompt {
    Prompt::new(name, name, description, Vec::new(), move |_| {
        let messages = messages.clone();
        Box::pin(async move {
            Ok(PromptOutput {
                description: None,
                messages,
            })
        })
    })
}

/// Registers the suite's prompts.
pub(crate) fn register(prompts: &PromptRegistry) -> Result<(), quire_tools::PromptError> {
    prompts.register(fixed_prompt(
        "test_simple_prompt",
        "A prompt without arguments.",
        vec![PromptMessage::user_text("This is a simple prompt for testing.")],
    ))?;
    prompts.register(Prompt::new(
        "test_prompt_with_arguments",
        "test_prompt_with_arguments",
        "A prompt with two arguments.",
        vec![
            PromptArgument::required("arg1", "First test argument").completing(Completes::Values(vec![
                "paris".into(),
                "park".into(),
                "party".into(),
            ])),
            PromptArgument::required("arg2", "Second test argument"),
        ],
        |call| {
            Box::pin(async move {
                let arg = |name: &str| call.args[name].as_str().unwrap_or_default().to_owned();
                Ok(PromptOutput {
                    description: None,
                    messages: vec![PromptMessage::user_text(format!(
                        "Prompt with arguments: arg1='{}', arg2='{}'",
                        arg("arg1"),
                        arg("arg2")
                    ))],
                })
            })
        },
    ))?;
    prompts.register(Prompt::new(
        "test_prompt_with_embedded_resource",
        "test_prompt_with_embedded_resource",
        "A prompt embedding a resource.",
        vec![PromptArgument::required("resourceUri", "URI of the resource to embed")],
        |call| {
            Box::pin(async move {
                let uri = call.args["resourceUri"].as_str().unwrap_or_default().to_owned();
                Ok(PromptOutput {
                    description: None,
                    messages: vec![
                        PromptMessage {
                            from_user: true,
                            content: text_resource(&uri, "text/plain", "Embedded resource content for testing."),
                        },
                        PromptMessage::user_text("Please process the embedded resource above."),
                    ],
                })
            })
        },
    ))?;
    prompts.register(fixed_prompt(
        "test_prompt_with_image",
        "A prompt with an image.",
        vec![
            PromptMessage {
                from_user: true,
                content: image(),
            },
            PromptMessage::user_text("Please analyze the image above."),
        ],
    ))?;
    prompts.register(Prompt::new(
        "test_input_required_result_prompt",
        "test_input_required_result_prompt",
        "A prompt that asks the user for context first.",
        Vec::new(),
        |call| {
            Box::pin(async move {
                let form = name_form("What context should the prompt use?", "context");
                let replies = call.ask_all(vec![("user_context".into(), form)]).await?;
                Ok(PromptOutput {
                    description: None,
                    messages: vec![PromptMessage::user_text(format!(
                        "Use this context: {}",
                        field(&replies[0], "context")
                    ))],
                })
            })
        },
    ))?;
    Ok(())
}
